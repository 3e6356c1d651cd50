//! Use-time overrides of an entity's profile by URI query (`?eo=avg&enr=1&emt=non&delay=50`),
//! and the `fanout` flag. `ect` cannot be changed at use time.

use crate::operation::Operation;
use crate::profile::{Delay, Emt, MAX_DELAY_MS};

/// Profile fields overridden for one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `eo`: the operation.
    pub eo: Option<Operation>,
    /// `enr`: replies to wait for.
    pub enr: Option<u32>,
    /// `emt`: message type.
    pub emt: Option<Emt>,
    /// `delay`: delay between member requests.
    pub delay: Option<Delay>,
    /// `fanout`: forward PUT/POST/DELETE to every member.
    pub fanout: bool,
}

/// Why a query was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// `ect` at use time (answered 4.02 Bad Option).
    #[error("ect cannot be set per request: the communication type is fixed when the entity is created (got \"{0}\")")]
    Ect(String),
    /// Anything else wrong (answered 4.00).
    #[error("{0}")]
    Invalid(String),
}

/// Parses the Uri-Query arguments of a request to an entity.
pub fn parse_overrides(args: &[String]) -> Result<Overrides, QueryError> {
    let mut o = Overrides::default();
    let mut seen: Vec<&str> = Vec::new();
    for arg in args {
        let (key, value) = match arg.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (arg.as_str(), None),
        };
        if seen.contains(&key) {
            return Err(QueryError::Invalid(format!(
                "query parameter \"{key}\" is given twice"
            )));
        }
        seen.push(key);
        let need = |v| need(key, v);
        match key {
            "ect" => return Err(QueryError::Ect(value.unwrap_or("").to_string())),
            "eo" => {
                let v = need(value)?;
                o.eo = Some(Operation::from_name(v).ok_or_else(|| {
                    QueryError::Invalid(format!(
                        "eo=\"{v}\" is not an operation (lst, avg, min, max, sum, count, median)"
                    ))
                })?);
            }
            "enr" => {
                let v = need(value)?;
                o.enr = Some(v.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
                    QueryError::Invalid(format!("enr=\"{v}\" is not a positive number of replies"))
                })?);
            }
            "emt" => {
                let v = need(value)?;
                o.emt = Some(Emt::from_name(v).ok_or_else(|| {
                    QueryError::Invalid(format!("emt=\"{v}\" is not con or non"))
                })?);
            }
            "delay" => {
                let v = need(value)?;
                o.delay = Some(Delay::from_text(v).ok_or_else(|| {
                    QueryError::Invalid(format!(
                        "delay=\"{v}\" is neither \"auto\" nor 0 to {MAX_DELAY_MS} ms"
                    ))
                })?);
            }
            "fanout" if value.is_none() || value == Some("") => o.fanout = true,
            "fanout" => {
                return Err(QueryError::Invalid(
                    "fanout takes no value (write ?fanout)".into(),
                ))
            }
            other => {
                return Err(QueryError::Invalid(format!(
                    "unknown query parameter \"{other}\" (use eo, enr, emt, delay or fanout)"
                )))
            }
        }
    }
    Ok(o)
}

/// The value of `key`, which must be present and non-empty.
fn need<'a>(key: &str, value: Option<&'a str>) -> Result<&'a str, QueryError> {
    value
        .filter(|v| !v.is_empty())
        .ok_or_else(|| QueryError::Invalid(format!("query parameter \"{key}\" needs a value")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(args: &[&str]) -> Result<Overrides, QueryError> {
        parse_overrides(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn overrides() {
        let o = q(&["eo=avg", "enr=1", "emt=NON", "delay=auto"]).unwrap();
        assert_eq!(o.eo, Some(Operation::Average));
        assert_eq!(o.enr, Some(1));
        assert_eq!(o.emt, Some(Emt::Non));
        assert_eq!(o.delay, Some(Delay::Auto));
        assert_eq!(q(&["delay=100"]).unwrap().delay, Some(Delay::Millis(100)));
        assert!(q(&["fanout"]).unwrap().fanout);
        assert_eq!(q(&[]).unwrap(), Overrides::default());
    }

    #[test]
    fn ect_is_refused_separately() {
        assert_eq!(
            q(&["ect=multicast"]),
            Err(QueryError::Ect("multicast".into()))
        );
    }

    #[test]
    fn invalid_values_name_the_parameter() {
        for (args, text) in [
            (&["eo=mean"][..], "eo=\"mean\""),
            (&["enr=0"][..], "enr=\"0\""),
            (&["enr="][..], "\"enr\" needs a value"),
            (&["emt=both"][..], "emt=\"both\""),
            (&["delay=-1"][..], "delay=\"-1\""),
            (&["colour=red"][..], "unknown query parameter \"colour\""),
            (&["eo=avg", "eo=max"][..], "\"eo\" is given twice"),
            (&["fanout=1"][..], "fanout takes no value"),
        ] {
            let e = q(args).unwrap_err().to_string();
            assert!(e.contains(text), "{args:?}: {e}");
        }
    }
}
