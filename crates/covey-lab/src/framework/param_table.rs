//! A scenario's parameter table: one declaration per parameter, from which `--set` parsing,
//! validation errors, `covey lab params NAME` and the report's parameter section all come.
//!
//! The table names fields of the scenario's serde `Params`: a `--set name=value` is parsed as
//! the table says, checked against its range, and written into the serialised defaults, which
//! then deserialise into `Params`. A test checks every table against its `Params`.

use std::fmt::Write as _;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::LabError;

/// One parameter of a scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Param {
    /// The name to set it by: a field of the scenario's `Params`.
    pub name: &'static str,
    /// What it sets.
    pub help: &'static str,
    /// The values it accepts.
    pub accepts: Accepts,
}

/// The values a parameter accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Accepts {
    /// A whole number within `min..=max`, in `unit`.
    Integer {
        /// The smallest value.
        min: i64,
        /// The largest value.
        max: i64,
        /// What it counts ("ms", "frames"; empty for a plain number).
        unit: &'static str,
    },
    /// A finite number within `min..=max`, in `unit`.
    Number {
        /// The smallest value.
        min: f64,
        /// The largest value.
        max: f64,
        /// What it measures (empty for a plain number).
        unit: &'static str,
    },
    /// `true` or `false`.
    Bool,
    /// One of these words.
    OneOf(&'static [&'static str]),
    /// Any text (a path, a name).
    Text,
    /// A comma-separated list, each item as the inner rule says.
    ListOf(&'static Accepts),
}

impl std::fmt::Display for Accepts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = |f: &mut std::fmt::Formatter<'_>, unit: &str| {
            if unit.is_empty() {
                Ok(())
            } else {
                write!(f, "{unit}, ")
            }
        };
        match self {
            Accepts::Integer { min, max, unit: u } => {
                unit(f, u)?;
                write!(f, "{min} to {max}")
            }
            Accepts::Number { min, max, unit: u } => {
                unit(f, u)?;
                write!(f, "{min} to {max}")
            }
            Accepts::Bool => f.write_str("true or false"),
            Accepts::OneOf(words) => f.write_str(&words.join(", ")),
            Accepts::Text => f.write_str("text"),
            Accepts::ListOf(inner) => write!(f, "comma-separated: {inner}"),
        }
    }
}

impl Accepts {
    /// `text` as this rule's JSON value, or why not.
    fn parse(&self, text: &str) -> Result<Value, String> {
        let text = text.trim();
        match self {
            Accepts::Integer { min, max, .. } => {
                let n: i64 = text
                    .parse()
                    .map_err(|_| "is not a whole number".to_string())?;
                if n < *min || n > *max {
                    return Err(format!("is out of range ({self})"));
                }
                Ok(Value::from(n))
            }
            Accepts::Number { min, max, .. } => {
                let x: f64 = text
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite())
                    .ok_or_else(|| "is not a number".to_string())?;
                if x < *min || x > *max {
                    return Err(format!("is out of range ({self})"));
                }
                Ok(Value::from(x))
            }
            Accepts::Bool => match text {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err("is not true or false".to_string()),
            },
            Accepts::OneOf(words) => {
                if words.contains(&text) {
                    Ok(Value::from(text))
                } else {
                    Err(format!("is not one of {}", words.join(", ")))
                }
            }
            Accepts::Text if text.is_empty() => Err("is empty".to_string()),
            Accepts::Text => Ok(Value::from(text)),
            Accepts::ListOf(inner) => {
                let items: Result<Vec<Value>, String> = text
                    .split(',')
                    .map(|item| {
                        inner
                            .parse(item)
                            .map_err(|why| format!("has an item `{}` that {why}", item.trim()))
                    })
                    .collect();
                let items = items?;
                if items.is_empty() {
                    return Err("is an empty list".to_string());
                }
                Ok(Value::Array(items))
            }
        }
    }
}

/// A parameter as `covey lab params` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    /// The name to set it by.
    pub name: &'static str,
    /// Its value when not set: the paper's, or ours where the paper names none.
    pub default: String,
    /// The values it accepts.
    pub accepts: String,
    /// What it sets.
    pub help: &'static str,
}

/// The table's parameters with their values in `defaults`.
pub fn describe<P: Serialize>(table: &[Param], defaults: &P) -> Vec<ParamInfo> {
    let values = as_object(defaults);
    table
        .iter()
        .map(|p| ParamInfo {
            name: p.name,
            default: values.get(p.name).map(display).unwrap_or_default(),
            accepts: p.accepts.to_string(),
            help: p.help,
        })
        .collect()
}

/// `defaults` with every `name=value` of `sets` applied, each checked against `table`.
pub fn apply<P: Serialize + DeserializeOwned>(
    scenario: &str,
    table: &[Param],
    defaults: &P,
    sets: &[(String, String)],
) -> Result<P, LabError> {
    let mut values = as_object(defaults);
    for (name, text) in sets {
        let name = name.trim();
        let param = table.iter().find(|p| p.name == name).ok_or_else(|| {
            let names: Vec<&str> = table.iter().map(|p| p.name).collect();
            let choices = if names.is_empty() {
                format!("{scenario} takes no parameters")
            } else {
                format!("choose from {}", names.join(", "))
            };
            LabError::InvalidOption(format!("{scenario} has no parameter `{name}` ({choices})"))
        })?;
        let value = param.accepts.parse(text).map_err(|why| {
            LabError::InvalidOption(format!("{scenario}: `{name}={}` {why}", text.trim()))
        })?;
        values.insert(name.to_string(), value);
    }
    serde_json::from_value(Value::Object(values)).map_err(|e| {
        LabError::InvalidOption(format!(
            "{scenario}: the parameters do not fit together: {e}"
        ))
    })
}

/// The report's parameter section: every parameter with the value the run used, and the
/// paper's (or our) default beside it where the run changed it.
pub fn markdown_section<P: Serialize>(table: &[Param], used: &P, defaults: &P) -> String {
    let used = as_object(used);
    let defaults = as_object(defaults);
    let mut text = String::from(
        "## Parameters\n\nWhat this run used; `covey lab params NAME` lists what each accepts.\n\n\
         | parameter | value | default | what it sets |\n|---|---|---|---|\n",
    );
    for p in table {
        let value = used.get(p.name).map(display).unwrap_or_default();
        let default = defaults.get(p.name).map(display).unwrap_or_default();
        let default = if default == value {
            "same".to_string()
        } else {
            default
        };
        let _ = writeln!(text, "| `{}` | {value} | {default} | {} |", p.name, p.help);
    }
    text
}

fn as_object<P: Serialize>(params: &P) -> Map<String, Value> {
    match serde_json::to_value(params) {
        Ok(Value::Object(map)) => map,
        // A scenario's Params is a struct of plain values: anything else is a bug, and a
        // table check test catches it before a user can.
        _ => Map::new(),
    }
}

/// A value as the user would type it after `--set name=`.
fn display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(display).collect::<Vec<_>>().join(","),
        Value::Null => "none".to_string(),
        other => other.to_string(),
    }
}

/// Problems with `table` against `defaults`: names that are not fields, defaults the table
/// would reject. Empty when the table is sound; every scenario's table is tested with it.
pub fn table_problems<P: Serialize>(table: &[Param], defaults: &P) -> Vec<String> {
    let values = as_object(defaults);
    let mut problems = Vec::new();
    for (i, p) in table.iter().enumerate() {
        if table[..i].iter().any(|q| q.name == p.name) {
            problems.push(format!("`{}` is declared twice", p.name));
        }
        match values.get(p.name) {
            None => problems.push(format!("`{}` is not a field of the parameters", p.name)),
            Some(v) => {
                if let Err(why) = p.accepts.parse(&display(v)) {
                    problems.push(format!("`{}`'s default {} {why}", p.name, display(v)));
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Demo {
        queue: usize,
        rate: f64,
        models: Vec<String>,
        fixed: bool,
    }

    const TABLE: &[Param] = &[
        Param {
            name: "queue",
            help: "frames a queue holds",
            accepts: Accepts::Integer {
                min: 1,
                max: 1024,
                unit: "frames",
            },
        },
        Param {
            name: "rate",
            help: "requests per second",
            accepts: Accepts::Number {
                min: 0.5,
                max: 100.0,
                unit: "",
            },
        },
        Param {
            name: "models",
            help: "which models",
            accepts: Accepts::ListOf(&Accepts::OneOf(&["a", "b"])),
        },
    ];

    fn demo() -> Demo {
        Demo {
            queue: 8,
            rate: 2.5,
            models: vec!["a".into()],
            fixed: true,
        }
    }

    fn sets(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_set_changes_only_its_field() {
        let p = apply(
            "demo",
            TABLE,
            &demo(),
            &sets(&[("queue", "10"), ("models", "a, b")]),
        )
        .unwrap();
        assert_eq!(
            p,
            Demo {
                queue: 10,
                models: vec!["a".into(), "b".into()],
                ..demo()
            }
        );
    }

    #[test]
    fn values_out_of_range_or_of_the_wrong_kind_are_refused_with_the_rule() {
        let err = |pairs| {
            apply("demo", TABLE, &demo(), &sets(pairs))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(&[("queue", "0")]),
            "invalid option: demo: `queue=0` is out of range (frames, 1 to 1024)"
        );
        assert!(err(&[("rate", "fast")]).contains("is not a number"));
        assert!(err(&[("rate", "inf")]).contains("is not a number"));
        assert!(err(&[("models", "a,c")]).contains("has an item `c` that is not one of a, b"));
        assert_eq!(
            err(&[("fixed", "false")]),
            "invalid option: demo has no parameter `fixed` (choose from queue, rate, models)"
        );
    }

    #[test]
    fn describe_and_the_report_section_show_values_as_they_are_typed() {
        let d = describe(TABLE, &demo());
        assert_eq!(d[0].default, "8");
        assert_eq!(d[0].accepts, "frames, 1 to 1024");
        assert_eq!(d[1].default, "2.5");
        assert_eq!(d[2].default, "a");
        let used = Demo { queue: 3, ..demo() };
        let section = markdown_section(TABLE, &used, &demo());
        assert!(
            section.contains("| `queue` | 3 | 8 | frames a queue holds |"),
            "{section}"
        );
        assert!(section.contains("| `rate` | 2.5 | same |"), "{section}");
    }

    #[test]
    fn a_table_naming_a_missing_field_or_a_default_it_refuses_is_caught() {
        assert!(table_problems(TABLE, &demo()).is_empty());
        let bad = [Param {
            name: "queues",
            ..TABLE[0]
        }];
        assert_eq!(
            table_problems(&bad, &demo()),
            ["`queues` is not a field of the parameters"]
        );
        let narrow = [Param {
            accepts: Accepts::Integer {
                min: 10,
                max: 20,
                unit: "",
            },
            ..TABLE[0]
        }];
        assert_eq!(table_problems(&narrow, &demo()).len(), 1);
    }
}
