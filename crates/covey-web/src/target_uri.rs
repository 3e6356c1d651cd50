//! The CoAP target of a proxied HTTP request (RFC 8075 §5): `/hc/coap://host/path?query`
//! (the default mapping), `/hc/host/path` (scheme left out: coap), a percent-encoded target,
//! or `/hc/?target_uri=<encoded URI>`.

use percent_encoding::percent_decode_str;

/// The prefix the proxy is mounted at.
pub const PREFIX: &str = "/hc/";

/// Why a request names no usable CoAP target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetError {
    /// Nothing, or nothing decodable, after the prefix.
    Missing(String),
    /// A scheme this proxy does not speak (coaps, coap+tcp, http, ...).
    Scheme(String),
}

impl std::fmt::Display for TargetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TargetError::Missing(why) => write!(f, "no CoAP target URI: {why}"),
            TargetError::Scheme(s) => write!(f, "this proxy forwards coap:// only, not {s}://"),
        }
    }
}

/// The `coap://` URI a request for `path_and_query` (as received, starting with
/// [`PREFIX`]) is forwarded to.
pub fn target(path_and_query: &str) -> Result<String, TargetError> {
    let rest = path_and_query
        .strip_prefix(PREFIX)
        .ok_or_else(|| TargetError::Missing(format!("the path does not start with {PREFIX}")))?;
    let raw = match rest.strip_prefix('?') {
        Some(query) => query
            .split('&')
            .find_map(|pair| pair.strip_prefix("target_uri="))
            .map(decode)
            .transpose()?
            .ok_or_else(|| TargetError::Missing("no target_uri= in the query".into()))?,
        None if !rest.contains("://") && rest.contains('%') => decode(rest)?,
        None => rest.to_string(),
    };
    if raw.is_empty() {
        return Err(TargetError::Missing(format!(
            "write it after {PREFIX}, e.g. {PREFIX}coap://[::1]/.well-known/core"
        )));
    }
    match raw.split_once("://") {
        Some((scheme, _)) if scheme.eq_ignore_ascii_case("coap") => Ok(raw),
        Some((scheme, _)) if !scheme.contains('/') => Err(TargetError::Scheme(scheme.into())),
        _ => Ok(format!("coap://{raw}")),
    }
}

fn decode(text: &str) -> Result<String, TargetError> {
    percent_decode_str(text)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| TargetError::Missing("the percent-encoded target is not UTF-8".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_mapping_keeps_path_and_query() {
        assert_eq!(
            target("/hc/coap://127.0.0.1:5683/e/t?eo=avg&enr=2").unwrap(),
            "coap://127.0.0.1:5683/e/t?eo=avg&enr=2"
        );
        assert_eq!(target("/hc/[::1]/s/t").unwrap(), "coap://[::1]/s/t");
    }

    #[test]
    fn encoded_targets_are_decoded() {
        assert_eq!(
            target("/hc/coap%3A%2F%2F%5B%3A%3A1%5D%2Fs%2Ft").unwrap(),
            "coap://[::1]/s/t"
        );
        assert_eq!(
            target("/hc/?target_uri=coap%3A%2F%2Fh%2Fa%3Fb%3D1").unwrap(),
            "coap://h/a?b=1"
        );
    }

    #[test]
    fn other_schemes_and_empty_targets_are_refused() {
        assert_eq!(
            target("/hc/coaps://h/x"),
            Err(TargetError::Scheme("coaps".into()))
        );
        assert!(matches!(target("/hc/"), Err(TargetError::Missing(_))));
        assert!(matches!(target("/hc/?x=1"), Err(TargetError::Missing(_))));
    }
}
