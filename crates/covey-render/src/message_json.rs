//! A message for machines: one JSON object with header fields, decoded options and payload.

use covey_core::{CoapOption, Message};
use serde_json::{json, Map, Value};

use super::hexdump::hex_string;
use super::option_value::{no_response_classes, OptionValue};
use super::payload::Payload;

/// Renders `message` as one JSON object (`type`, `code`, `code_name`, `mid`, `token`,
/// `options`, `payload`).
pub fn render(message: &Message<'_>) -> Value {
    let code = message.code();
    let payload = match message.payload() {
        [] => Value::Null,
        bytes => Payload::new(bytes, message.content_format()).to_json(),
    };
    json!({
        "type": message.message_type().abbreviation(),
        "code": format!("{}.{:02}", code.class(), code.detail()),
        "code_name": code.name(),
        "mid": message.message_id(),
        "token": hex_string(message.token_bytes()),
        "options": message.options().map(|o| option(&o)).collect::<Vec<_>>(),
        "payload": payload,
    })
}

/// `number`, `name`, `value` (typed by format), `raw` hex, and fields that explain the value.
pub fn option(option: &CoapOption<'_>) -> Value {
    let mut fields = Map::new();
    fields.insert("number".into(), json!(option.number.0));
    fields.insert("name".into(), json!(option.number.name()));
    let mut extra = Map::new();
    let value = match OptionValue::of(option) {
        OptionValue::Empty => Value::Null,
        OptionValue::Uint(n) | OptionValue::Seconds(n) | OptionValue::Size(n) => json!(n),
        OptionValue::NoResponse(bits) => {
            let (classes, _) = no_response_classes(bits);
            extra.insert("suppress".into(), json!(classes));
            json!(bits)
        }
        OptionValue::ContentFormat(cf) => {
            extra.insert("media_type".into(), json!(cf.media_type()));
            json!(cf.0)
        }
        OptionValue::Block(block) => {
            extra.insert(
                "block".into(),
                json!({ "num": block.num, "more": block.more, "size": block.size() }),
            );
            json!(block.to_value())
        }
        OptionValue::BadBlock(n, e) => {
            extra.insert("error".into(), json!(e.to_string()));
            json!(n)
        }
        OptionValue::Text(text) => json!(text),
        OptionValue::NotUtf8(_) => {
            extra.insert("error".into(), json!("not UTF-8"));
            Value::Null
        }
        OptionValue::Opaque(bytes) => json!(hex_string(bytes)),
        OptionValue::Unknown(number, bytes) => {
            extra.insert("critical".into(), json!(number.is_critical()));
            extra.insert("unsafe".into(), json!(number.is_unsafe()));
            json!(hex_string(bytes))
        }
    };
    fields.insert("value".into(), value);
    fields.insert("raw".into(), json!(hex_string(option.value)));
    fields.extend(extra);
    Value::Object(fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_hex::parse_hex;

    fn json_of(hex: &str) -> Value {
        let bytes = parse_hex(hex).unwrap();
        render(&Message::parse(&bytes).unwrap())
    }

    #[test]
    fn spec_vector_e2() {
        assert_eq!(
            json_of("62 45 7d 34 1a 2b c0 ff 32 32 2e 35"),
            json!({
                "type": "ACK", "code": "2.05", "code_name": "Content", "mid": 32052,
                "token": "1a2b",
                "options": [{"number": 12, "name": "Content-Format", "value": 0, "raw": "",
                             "media_type": "text/plain;charset=utf-8"}],
                "payload": {"content_format": 0, "text": "22.5"}
            })
        );
    }

    #[test]
    fn key_order_follows_the_documented_schema() {
        let text = json_of("42 01 7d 34 1a 2b b4 74 65 6d 70").to_string();
        assert_eq!(
            text,
            r#"{"type":"CON","code":"0.01","code_name":"GET","mid":32052,"token":"1a2b","options":[{"number":11,"name":"Uri-Path","value":"temp","raw":"74656d70"}],"payload":null}"#
        );
    }

    #[test]
    fn typed_option_values() {
        // Block2 2/1/64, unknown 65000 = 0x0102 (delta 65000-23 = 64977 -> 14: 64708 = 0xfcc4).
        let v = json_of("40 01 00 01 d1 0a 2a e2 fc c4 01 02");
        assert_eq!(
            v["options"][0],
            json!({"number": 23, "name": "Block2", "value": 42, "raw": "2a",
                   "block": {"num": 2, "more": true, "size": 64}})
        );
        assert_eq!(
            v["options"][1],
            json!({"number": 65000, "name": null, "value": "0102", "raw": "0102",
                   "critical": false, "unsafe": false})
        );
    }
}
