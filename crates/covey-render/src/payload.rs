//! A payload shown by its Content-Format, or by what it looks like when there is none: the
//! one renderer for every command that prints a payload (`decode`, `get`, `observe`, ...).

use covey_core::link_format::{links, LinkFormatError};
use covey_core::ContentFormat;
use serde_json::{json, Value};

use super::cbor_diag::{self, Item};
use super::hexdump::{hex_dump, hex_string};
use super::terminal::safe_for_terminal;

/// How the payload is presented.
#[derive(Debug, Clone, PartialEq)]
enum Shape<'a> {
    /// UTF-8 text, shown as is.
    Text(&'a str),
    /// Parsed JSON, pretty-printed.
    Json(Value),
    /// A CBOR item in diagnostic notation; `senml` adds SenML label names.
    Cbor { item: Item, senml: bool },
    /// CoRE link format: the text and its links, one per line.
    Links(&'a str, Vec<&'a str>),
    /// Anything else, as a hex dump.
    Binary,
}

/// A payload decoded for display.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload<'a> {
    bytes: &'a [u8],
    content_format: Option<ContentFormat>,
    shape: Shape<'a>,
    /// Why the declared Content-Format could not be honoured.
    problem: Option<String>,
}

impl<'a> Payload<'a> {
    /// Decides how to show `bytes`: by `content_format`, else by sniffing (UTF-8 text, then
    /// CBOR, then binary). Never fails: what does not parse as declared falls back to text or hex.
    pub fn new(bytes: &'a [u8], content_format: Option<ContentFormat>) -> Payload<'a> {
        let text = std::str::from_utf8(bytes).ok();
        let (shape, problem) = match content_format {
            None => (sniff(bytes, text), None),
            Some(cf) if cf.is_json() => match (serde_json::from_slice::<Value>(bytes), text) {
                (Ok(value), _) => (Shape::Json(value), None),
                (Err(e), Some(text)) => (Shape::Text(text), Some(format!("not valid JSON: {e}"))),
                (Err(e), None) => (Shape::Binary, Some(format!("not valid JSON: {e}"))),
            },
            Some(cf) if is_cbor_based(cf) => match cbor_diag::parse(bytes) {
                Ok(item) => (
                    Shape::Cbor {
                        item,
                        senml: is_senml_cbor(cf),
                    },
                    None,
                ),
                Err(e) => (Shape::Binary, Some(format!("not valid CBOR {e}"))),
            },
            Some(ContentFormat::LINK_FORMAT) => match text {
                Some(text) => match link_values(text) {
                    Ok(links) => (Shape::Links(text, links), None),
                    Err(e) => (
                        Shape::Text(text),
                        Some(format!("not valid link format {e}")),
                    ),
                },
                None => (Shape::Binary, Some("not valid UTF-8".into())),
            },
            Some(cf) if cf.is_text() => match text {
                Some(text) => (Shape::Text(text), None),
                None => (Shape::Binary, Some("not valid UTF-8".into())),
            },
            Some(_) => (Shape::Binary, None),
        };
        Payload {
            bytes,
            content_format,
            shape,
            problem,
        }
    }

    /// Size and format for a heading: `4 bytes, text/plain;charset=utf-8`.
    pub fn summary(&self) -> String {
        let size = match self.bytes.len() {
            1 => "1 byte".to_string(),
            n => format!("{n} bytes"),
        };
        let format = match self.content_format {
            Some(cf) => match cf.media_type() {
                Some(media) => media.to_string(),
                None => format!("Content-Format {}", cf.0),
            },
            None => match self.shape {
                Shape::Text(_) => "no Content-Format, looks like text".into(),
                Shape::Cbor { .. } => "no Content-Format, looks like CBOR".into(),
                _ => "no Content-Format, binary".into(),
            },
        };
        match &self.problem {
            Some(problem) => format!(
                "{size}, {format}, {problem}, shown as {}",
                self.shape_name()
            ),
            None => format!("{size}, {format}"),
        }
    }

    fn shape_name(&self) -> &'static str {
        match self.shape {
            Shape::Text(_) | Shape::Links(..) => "text",
            Shape::Json(_) => "JSON",
            Shape::Cbor { .. } => "CBOR",
            Shape::Binary => "hex",
        }
    }

    /// The body for people, ending in a newline. `terminal` escapes control characters in
    /// text so the payload cannot drive the terminal.
    pub fn body_text(&self, terminal: bool) -> String {
        let shown = |text: &str| -> String {
            let mut out = if terminal {
                safe_for_terminal(text).into_owned()
            } else {
                text.to_owned()
            };
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out
        };
        match &self.shape {
            Shape::Text(text) => shown(text),
            Shape::Json(value) => {
                // Serialising a Value cannot fail; fall back to the raw text all the same.
                let pretty = serde_json::to_string_pretty(value)
                    .unwrap_or_else(|_| String::from_utf8_lossy(self.bytes).into_owned());
                pretty + "\n"
            }
            Shape::Cbor { item, senml } => {
                let style = cbor_diag::Style {
                    pretty: true,
                    senml_labels: *senml,
                };
                cbor_diag::render(item, style) + "\n"
            }
            Shape::Links(_, links) => shown(&links.join("\n")),
            Shape::Binary => hex_dump(self.bytes),
        }
    }

    /// The payload for machines: `content_format` and one of `text`, `json`, `cbor_diag`,
    /// `hex` (plus `links` for link format and `error` when the declared format failed).
    pub fn to_json(&self) -> Value {
        let mut object = json!({ "content_format": self.content_format.map(|cf| cf.0) });
        let (key, value) = match &self.shape {
            Shape::Text(text) => ("text", json!(text)),
            Shape::Json(value) => ("json", value.clone()),
            Shape::Cbor { item, .. } => (
                "cbor_diag",
                json!(cbor_diag::render(item, cbor_diag::Style::default())),
            ),
            Shape::Links(text, _) => ("text", json!(text)),
            Shape::Binary => ("hex", json!(hex_string(self.bytes))),
        };
        object[key] = value;
        if let Shape::Links(_, links) = &self.shape {
            object["links"] = json!(links);
        }
        if let Some(problem) = &self.problem {
            object["error"] = json!(problem);
        }
        object
    }
}

/// Without a Content-Format: UTF-8 text, else CBOR, else binary.
fn sniff<'a>(bytes: &[u8], text: Option<&'a str>) -> Shape<'a> {
    if let Some(text) = text {
        return Shape::Text(text);
    }
    match cbor_diag::parse(bytes) {
        Ok(item) => Shape::Cbor { item, senml: false },
        Err(_) => Shape::Binary,
    }
}

/// Formats whose payload is one CBOR item (COSE objects, multipart-core and CWT included).
fn is_cbor_based(cf: ContentFormat) -> bool {
    cf.is_cbor()
        || matches!(
            cf,
            ContentFormat::COSE_ENCRYPT0
                | ContentFormat::COSE_MAC0
                | ContentFormat::COSE_SIGN1
                | ContentFormat::MULTIPART_CORE
                | ContentFormat::COSE_KEY
                | ContentFormat::COSE_KEY_SET
        )
}

fn is_senml_cbor(cf: ContentFormat) -> bool {
    matches!(cf, ContentFormat::SENML_CBOR | ContentFormat::SENSML_CBOR)
}

/// The link-values of a link-format document as written, or the first grammar error.
fn link_values(text: &str) -> Result<Vec<&str>, LinkFormatError> {
    links(text).map(|link| link.map(|l| l.raw())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(bytes: &[u8], cf: Option<u16>) -> String {
        Payload::new(bytes, cf.map(ContentFormat)).body_text(false)
    }

    fn summary(bytes: &[u8], cf: Option<u16>) -> String {
        Payload::new(bytes, cf.map(ContentFormat)).summary()
    }

    #[test]
    fn declared_formats() {
        assert_eq!(body(b"22.5", Some(0)), "22.5\n");
        assert_eq!(
            summary(b"22.5", Some(0)),
            "4 bytes, text/plain;charset=utf-8"
        );
        assert_eq!(
            body(br#"{"a":[1,2]}"#, Some(50)),
            "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n"
        );
        assert_eq!(body(&[0xa1, 0x61, 0x61, 0x01], Some(60)), "{\"a\": 1}\n");
        assert_eq!(body(&[0x81, 0xa1, 0x02, 0x01], Some(112)), "[{2 /v/: 1}]\n");
        assert_eq!(
            body(b"AB", Some(42)),
            "0000  41 42                                             |AB|\n"
        );
        assert_eq!(summary(b"AB", Some(9999)), "2 bytes, Content-Format 9999");
        assert_eq!(summary(b"A", Some(42)), "1 byte, application/octet-stream");
    }

    #[test]
    fn link_format_one_link_per_line() {
        let text = br#"</sensors/temp>;rt="a,b";ct=0;obs, </actuators/led>;if="core.a""#;
        assert_eq!(
            body(text, Some(40)),
            "</sensors/temp>;rt=\"a,b\";ct=0;obs\n</actuators/led>;if=\"core.a\"\n"
        );
        let p = Payload::new(text, Some(ContentFormat::LINK_FORMAT));
        assert_eq!(p.to_json()["links"][1], "</actuators/led>;if=\"core.a\"");
        let p = Payload::new(b"</a>,,</b>", Some(ContentFormat::LINK_FORMAT));
        assert!(
            p.summary().contains("not valid link format at byte 5: "),
            "{}",
            p.summary()
        );
        assert_eq!(p.body_text(false), "</a>,,</b>\n");
    }

    #[test]
    fn json_keeps_key_order() {
        assert_eq!(
            body(br#"{"z":1,"a":2}"#, Some(50)),
            "{\n  \"z\": 1,\n  \"a\": 2\n}\n"
        );
    }

    #[test]
    fn sniffing_without_content_format() {
        assert_eq!(
            summary(b"hi", None),
            "2 bytes, no Content-Format, looks like text"
        );
        assert_eq!(
            summary(&[0x82, 0x01, 0xf5], None),
            "3 bytes, no Content-Format, looks like CBOR"
        );
        assert_eq!(body(&[0x82, 0x01, 0xf5], None), "[1, true]\n");
        assert_eq!(
            summary(&[0xff, 0x00], None),
            "2 bytes, no Content-Format, binary"
        );
    }

    #[test]
    fn declared_format_that_does_not_parse_falls_back() {
        let p = Payload::new(b"{oops", Some(ContentFormat::JSON));
        assert!(p
            .summary()
            .starts_with("5 bytes, application/json, not valid JSON: "));
        assert!(p.summary().ends_with(", shown as text"));
        assert_eq!(p.body_text(false), "{oops\n");
        let p = Payload::new(&[0x82, 0x01], Some(ContentFormat::CBOR));
        assert_eq!(
            p.summary(),
            "2 bytes, application/cbor, not valid CBOR at byte 0: element count exceeds the remaining data, shown as hex"
        );
        assert_eq!(p.to_json()["hex"], "8201");
        assert!(p.to_json()["error"].is_string());
        let p = Payload::new(&[0xff], Some(ContentFormat::TEXT_PLAIN));
        assert_eq!(
            p.to_json(),
            json!({"content_format": 0, "hex": "ff", "error": "not valid UTF-8"})
        );
    }

    #[test]
    fn text_is_made_safe_only_for_terminals() {
        let p = Payload::new(b"\x1b[2Jhi", Some(ContentFormat::TEXT_PLAIN));
        assert_eq!(p.body_text(true), "\\u{1b}[2Jhi\n");
        assert_eq!(p.body_text(false), "\x1b[2Jhi\n");
    }

    #[test]
    fn machine_form() {
        let p = Payload::new(b"22.5", Some(ContentFormat::TEXT_PLAIN));
        assert_eq!(p.to_json(), json!({"content_format": 0, "text": "22.5"}));
        let p = Payload::new(b"[1]", Some(ContentFormat::JSON));
        assert_eq!(p.to_json(), json!({"content_format": 50, "json": [1]}));
        let p = Payload::new(&[0x81, 0xa1, 0x02, 0x01], Some(ContentFormat::SENML_CBOR));
        assert_eq!(
            p.to_json(),
            json!({"content_format": 112, "cbor_diag": "[{2: 1}]"})
        );
        let p = Payload::new(&[0xff, 0x00], None);
        assert_eq!(p.to_json(), json!({"content_format": null, "hex": "ff00"}));
    }
}
