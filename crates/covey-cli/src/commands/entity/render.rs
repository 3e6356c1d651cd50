//! The gateway's replies as text for a terminal: the entity list, a profile, a combined reply.

use std::fmt::Write;

use covey_core::link_format::links;
use covey_group::ProfileDocument;
use serde_json::{json, Map, Value};

use crate::exit::{ExitKind, Failure};

/// The entities of a `GET /e` link-format document: name, path, URI and every attribute.
pub fn entity_list(text: &str, base: &str) -> Result<Vec<Value>, Failure> {
    let mut out = Vec::new();
    for link in links(text) {
        let link = link.map_err(|e| {
            Failure::new(
                ExitKind::Other,
                format!("the gateway's entity list is not link format: {e}"),
            )
        })?;
        let path = link.target();
        let Some(name) = path.strip_prefix("/e/") else {
            continue;
        };
        let mut entry = Map::new();
        entry.insert("name".into(), json!(name));
        entry.insert("path".into(), json!(path));
        entry.insert("uri".into(), json!(format!("{base}{path}")));
        for a in link.attributes() {
            let value = match a.value {
                Some(v) => json!(v.unquoted_str().unwrap_or(v.inner())),
                None => json!(true),
            };
            entry.insert(a.name.to_string(), value);
        }
        out.push(Value::Object(entry));
    }
    Ok(out)
}

/// A table of entities: name, communication type, URI.
pub fn list_table(entities: &[Value]) -> String {
    if entities.is_empty() {
        return "no entities\n".into();
    }
    let width = entities
        .iter()
        .map(|e| text(&e["name"]).len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!("{:width$}  {:9}  URI\n", "NAME", "ECT");
    for e in entities {
        let _ = writeln!(
            out,
            "{:width$}  {:9}  {}",
            text(&e["name"]),
            text(&e["ect"]),
            text(&e["uri"])
        );
    }
    out
}

/// A profile document, one field a line in document order, members one a line.
pub fn profile(doc: &ProfileDocument) -> String {
    let one = |v: Option<String>| v.into_iter().collect::<Vec<_>>();
    let eo = doc
        .eo
        .as_ref()
        .map(|eo| eo.iter().map(|o| o.name()).collect::<Vec<_>>().join(" "));
    let fields = [
        ("name", one(doc.name.clone())),
        ("er", doc.er.clone().unwrap_or_default()),
        ("emt", one(doc.emt.map(|e| e.name().to_string()))),
        ("ect", one(doc.ect.map(|e| e.name().to_string()))),
        ("enr", one(doc.enr.map(|n| n.to_string()))),
        ("eo", one(eo)),
        ("delay", one(doc.delay.map(|d| d.to_string()))),
        ("mcastURI", one(doc.mcast_uri.clone())),
        ("unjoined", doc.unjoined.clone()),
    ];
    let mut out = String::new();
    for (key, values) in fields {
        for (i, value) in values.iter().enumerate() {
            let label = if i == 0 { key } else { "" };
            let _ = writeln!(out, "{label:9} {value}");
        }
    }
    out
}

/// A combined reply (`application/json`): the result, who answered, their values, who
/// is missing.
pub fn combined(doc: &Value) -> String {
    let mut out = String::new();
    let op = text(&doc["op"]);
    let entity = text(&doc["entity"]);
    match &doc["value"] {
        Value::Null if op == "lst" || op == "fanout" => {
            let _ = writeln!(out, "{entity} ({op})");
        }
        Value::Null => {
            let _ = writeln!(out, "{entity} {op}: no value");
        }
        v => {
            let _ = writeln!(out, "{entity} {op}: {}", text(v));
        }
    }
    let _ = writeln!(
        out,
        "answered: {} of {}",
        text(&doc["answered"]),
        text(&doc["members"])
    );
    let replies = doc["replies"].as_array().cloned().unwrap_or_default();
    let width = replies
        .iter()
        .flat_map(|r| {
            let own = std::iter::once(text(&r["member"]).len());
            let nested = r["values"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| text(&v["name"]).len() + 2);
            own.chain(nested)
        })
        .max()
        .unwrap_or(0);
    for r in &replies {
        let code = text(&r["code"]);
        let after = r["t"].as_f64().map_or(String::new(), reply_time);
        match r["values"].as_array() {
            Some(values) => {
                let _ = writeln!(
                    out,
                    "  {:width$}  {:>10}  {code}  {after}",
                    text(&r["member"]),
                    covey_group::plural::count(values.len(), "value", "values")
                );
                for v in values {
                    let name = format!("  {}", text(&v["name"]));
                    let _ = writeln!(out, "  {name:width$}  {:>10}", text(&v["value"]));
                }
            }
            None => {
                let _ = writeln!(
                    out,
                    "  {:width$}  {:>10}  {code}  {after}",
                    text(&r["member"]),
                    short(&text(&r["value"]))
                );
            }
        }
    }
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|m| m.iter().map(text).collect())
            .unwrap_or_default()
    };
    // Members an anycast (or any enr below the group size) did not wait for are not missing.
    let not_needed = names(&doc["not_needed"]);
    let missing: Vec<String> = names(&doc["missing"])
        .into_iter()
        .filter(|m| !not_needed.contains(m))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(out, "missing: {}", missing.join(" "));
    }
    if !not_needed.is_empty() {
        let _ = writeln!(out, "not needed: {}", not_needed.join(" "));
    }
    if let Some(more) = doc["missing_more"].as_u64() {
        let _ = writeln!(out, "(and {more} more missing)");
    }
    out
}

/// A reply time given in seconds, in ms with the precision it has: `0.42 ms`, `12.5 ms`,
/// `250 ms`, and seconds from 1 s up.
fn reply_time(secs: f64) -> String {
    let ms = secs * 1000.0;
    match ms {
        ms if ms >= 1000.0 => format!("{secs:.2} s"),
        ms if ms >= 100.0 => format!("{ms:.0} ms"),
        ms if ms >= 10.0 => format!("{ms:.1} ms"),
        ms => format!("{ms:.2} ms"),
    }
}

/// A member's value on one line: its first line, at most 40 characters.
fn short(value: &str) -> String {
    let first = value.lines().next().unwrap_or_default();
    if first.len() == value.len() && first.chars().count() <= 40 {
        return first.to_string();
    }
    let cut: String = first.chars().take(37).collect();
    format!("{cut}... ({} bytes)", value.len())
}

/// A JSON value as plain text: strings without quotes, numbers without binary noise
/// (at most 9 decimals: 23.899999999999995 reads 23.9).
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(x) if x.is_finite() && x.abs() < 1e15 => {
                let fixed = format!("{x:.9}");
                fixed
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                    .to_string()
            }
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_profiles_and_replies_read_well() {
        let list = entity_list(
            r#"</e/room1>;rt="core.entity";ect=unicast;ct="0 50",</e/f>;ect=multicast"#,
            "coap://[::1]",
        )
        .unwrap();
        assert_eq!(list[0]["name"], "room1");
        assert_eq!(list[0]["uri"], "coap://[::1]/e/room1");
        assert_eq!(list[0]["rt"], "core.entity");
        assert_eq!(list[1]["ect"], "multicast");
        let table = list_table(&list);
        assert!(
            table.contains("room1  unicast    coap://[::1]/e/room1"),
            "{table}"
        );
        assert_eq!(list_table(&[]), "no entities\n");

        let p = profile(
            &serde_json::from_value(
                json!({"name":"r","er":["coap://a/x","coap://b/x"],"eo":["avg","lst"],"enr":2,
                       "delay":"auto","mcastURI":"coap://[ff1e::89:1]/x"}),
            )
            .unwrap(),
        );
        assert_eq!(
            p,
            "name      r\ner        coap://a/x\n          coap://b/x\nenr       2\n\
             eo        avg lst\ndelay     auto\nmcastURI  coap://[ff1e::89:1]/x\n"
        );

        let c = combined(&json!({
            "entity":"coap://[::1]/e/r","op":"avg","value":21.5,"members":3,"answered":2,
            "replies":[{"member":"coap://a/x","code":"2.05","value":21,"t":0.0012},
                       {"member":"coap://b/x","code":"2.05","values":[{"name":"n1","value":22}],"t":0.002}],
            "missing":["coap://c/x"]}));
        assert!(
            c.starts_with("coap://[::1]/e/r avg: 21.5\nanswered: 2 of 3\n"),
            "{c}"
        );
        assert!(c.contains("coap://a/x          21  2.05  1.20 ms"), "{c}");
        assert!(c.contains("    n1                22"), "{c}");
        assert!(c.ends_with("missing: coap://c/x\n"), "{c}");
        assert_eq!(short("21.5"), "21.5");
        assert_eq!(text(&json!(23.899999999999995)), "23.9");
        assert_eq!(text(&json!(-0.5)), "-0.5");
        assert_eq!(text(&json!(20.0)), "20");
        assert_eq!(text(&json!(7)), "7");
        assert_eq!(short("line one\nline two"), "line one... (17 bytes)");
    }

    #[test]
    fn an_anycast_names_the_members_it_did_not_need_apart_from_the_missing() {
        let c = combined(&json!({
            "entity":"coap://[::1]/e/r","op":"avg","value":21,"members":3,"answered":1,
            "replies":[{"member":"coap://a/x","code":"2.05","value":21,"t":0.00042}],
            "missing":["coap://b/x","coap://c/x"],"not_needed":["coap://b/x"]}));
        assert!(c.contains("0.42 ms"), "{c}");
        assert!(
            c.ends_with("missing: coap://c/x\nnot needed: coap://b/x\n"),
            "{c}"
        );
    }

    #[test]
    fn reply_times_keep_the_precision_they_have() {
        assert_eq!(reply_time(0.00042), "0.42 ms");
        assert_eq!(reply_time(0.0125), "12.5 ms");
        assert_eq!(reply_time(0.25), "250 ms");
        assert_eq!(reply_time(2.345), "2.35 s");
    }
}
