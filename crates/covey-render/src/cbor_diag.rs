//! CBOR diagnostic notation (RFC 8949 §8, RFC 8610 Appendix G) for payloads shown to people.
//!
//! Decoding keeps what a generic CBOR value type loses (indefinite lengths, simple values,
//! float widths), so the notation says exactly what is on the wire.

use std::fmt;

/// Deepest nesting accepted, so hostile input cannot exhaust the stack.
const MAX_DEPTH: usize = 128;

/// Line width the pretty form tries to stay within.
const PRETTY_WIDTH: usize = 80;

/// One decoded CBOR data item.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// Major type 0.
    Unsigned(u64),
    /// Major type 1: the value is `-1 - n`.
    Negative(u64),
    /// Major type 2, definite or in chunks.
    Bytes(Chunks<Vec<u8>>),
    /// Major type 3, definite or in chunks.
    Text(Chunks<String>),
    /// Major type 4.
    Array {
        /// The elements.
        items: Vec<Item>,
        /// Encoded with indefinite length.
        indefinite: bool,
    },
    /// Major type 5, entries in wire order.
    Map {
        /// Key/value pairs.
        entries: Vec<(Item, Item)>,
        /// Encoded with indefinite length.
        indefinite: bool,
    },
    /// Major type 6: a tag number and its content.
    Tag(u64, Box<Item>),
    /// Major type 7 simple value (false = 20, true = 21, null = 22, undefined = 23).
    Simple(u8),
    /// Major type 7 float of any width, widened to f64.
    Float(f64),
}

/// A byte or text string: one definite piece, or the chunks of an indefinite-length one.
#[derive(Debug, Clone, PartialEq)]
pub enum Chunks<T> {
    /// A definite-length string.
    Definite(T),
    /// An indefinite-length string made of these definite chunks.
    Indefinite(Vec<T>),
}

/// Why bytes are not one well-formed CBOR item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CborError {
    /// Offset of the offending byte.
    pub offset: usize,
    /// The rule broken.
    pub reason: &'static str,
}

impl fmt::Display for CborError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.reason)
    }
}

impl std::error::Error for CborError {}

/// How an item is written out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// Break containers that do not fit on a line over several indented lines.
    pub pretty: bool,
    /// Annotate SenML integer map keys with their names, e.g. `2 /v/: 22.5`.
    pub senml_labels: bool,
}

/// Decodes `bytes` as exactly one CBOR item with nothing after it.
pub fn parse(bytes: &[u8]) -> Result<Item, CborError> {
    let mut d = Decoder { buf: bytes, pos: 0 };
    if bytes.is_empty() {
        return Err(d.error("no data"));
    }
    let item = d.item(0)?;
    if d.pos != bytes.len() {
        return Err(d.error("extra bytes after the first data item"));
    }
    Ok(item)
}

/// Writes `item` in diagnostic notation.
pub fn render(item: &Item, style: Style) -> String {
    let mut out = String::new();
    write_item(&mut out, item, style, 0);
    out
}

/// The argument of an item head.
enum Arg {
    Value(u64),
    Indefinite,
}

struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    fn error(&self, reason: &'static str) -> CborError {
        CborError {
            offset: self.pos,
            reason,
        }
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], CborError> {
        let remaining = self.buf.len() - self.pos;
        if n > remaining as u64 {
            return Err(self.error("data ends inside an item"));
        }
        let start = self.pos;
        self.pos += n as usize;
        Ok(&self.buf[start..self.pos])
    }

    fn peek_break(&self) -> bool {
        self.buf.get(self.pos) == Some(&0xFF)
    }

    /// Reads an initial byte and its argument: (major type, additional info, argument).
    fn head(&mut self) -> Result<(u8, u8, Arg), CborError> {
        let start = self.pos;
        let initial = self.take(1)?[0];
        let (major, info) = (initial >> 5, initial & 0x1F);
        let arg = match info {
            0..=23 => Arg::Value(info as u64),
            24..=27 => {
                let bytes = self.take(1 << (info - 24))?;
                Arg::Value(bytes.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64))
            }
            28..=30 => {
                self.pos = start;
                return Err(self.error("reserved additional information 28-30"));
            }
            _ => Arg::Indefinite,
        };
        Ok((major, info, arg))
    }

    fn item(&mut self, depth: usize) -> Result<Item, CborError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nesting deeper than 128 levels"));
        }
        let start = self.pos;
        let (major, info, arg) = self.head()?;
        let at_start = |reason| CborError {
            offset: start,
            reason,
        };
        match (major, arg) {
            (0, Arg::Value(n)) => Ok(Item::Unsigned(n)),
            (1, Arg::Value(n)) => Ok(Item::Negative(n)),
            (2, Arg::Value(n)) => Ok(Item::Bytes(Chunks::Definite(self.take(n)?.to_vec()))),
            (2, Arg::Indefinite) => {
                let mut chunks = Vec::new();
                while !self.eat_break() {
                    chunks.push(self.chunk(2)?.to_vec());
                }
                Ok(Item::Bytes(Chunks::Indefinite(chunks)))
            }
            (3, Arg::Value(n)) => Ok(Item::Text(Chunks::Definite(self.text(n)?))),
            (3, Arg::Indefinite) => {
                let mut chunks = Vec::new();
                while !self.eat_break() {
                    let chunk_start = self.pos;
                    let bytes = self.chunk(3)?;
                    let text = std::str::from_utf8(bytes).map_err(|_| CborError {
                        offset: chunk_start,
                        reason: "text string is not valid UTF-8",
                    })?;
                    chunks.push(text.to_owned());
                }
                Ok(Item::Text(Chunks::Indefinite(chunks)))
            }
            (4, arg) => {
                let mut items = Vec::new();
                let indefinite = matches!(arg, Arg::Indefinite);
                match arg {
                    Arg::Value(n) => {
                        // Each element takes at least one byte: refuse counts the data cannot hold.
                        self.check_count(n, start)?;
                        for _ in 0..n {
                            items.push(self.item(depth + 1)?);
                        }
                    }
                    Arg::Indefinite => {
                        while !self.eat_break() {
                            items.push(self.item(depth + 1)?);
                        }
                    }
                }
                Ok(Item::Array { items, indefinite })
            }
            (5, arg) => {
                let mut entries = Vec::new();
                let indefinite = matches!(arg, Arg::Indefinite);
                match arg {
                    Arg::Value(n) => {
                        self.check_count(n.saturating_mul(2), start)?;
                        for _ in 0..n {
                            let key = self.item(depth + 1)?;
                            entries.push((key, self.item(depth + 1)?));
                        }
                    }
                    Arg::Indefinite => {
                        while !self.eat_break() {
                            let key = self.item(depth + 1)?;
                            if self.peek_break() {
                                return Err(self.error("map ends after a key without a value"));
                            }
                            entries.push((key, self.item(depth + 1)?));
                        }
                    }
                }
                Ok(Item::Map {
                    entries,
                    indefinite,
                })
            }
            (6, Arg::Value(tag)) => Ok(Item::Tag(tag, Box::new(self.item(depth + 1)?))),
            (7, Arg::Value(v)) => match info {
                0..=23 => Ok(Item::Simple(v as u8)),
                24 if v < 32 => Err(at_start("simple value below 32 in two-byte form")),
                24 => Ok(Item::Simple(v as u8)),
                25 => Ok(Item::Float(f16_to_f64(v as u16))),
                26 => Ok(Item::Float(f32::from_bits(v as u32) as f64)),
                _ => Ok(Item::Float(f64::from_bits(v))),
            },
            (7, Arg::Indefinite) => Err(at_start("break outside an indefinite-length item")),
            _ => Err(at_start(
                "indefinite length not allowed for this major type",
            )),
        }
    }

    /// Consumes a break byte if one is next; fails later via `head` when data runs out.
    fn eat_break(&mut self) -> bool {
        let found = self.peek_break();
        if found {
            self.pos += 1;
        }
        found
    }

    fn check_count(&self, needed: u64, start: usize) -> Result<(), CborError> {
        if needed > (self.buf.len() - self.pos) as u64 {
            return Err(CborError {
                offset: start,
                reason: "element count exceeds the remaining data",
            });
        }
        Ok(())
    }

    /// One definite-length chunk of an indefinite string of `major` type.
    fn chunk(&mut self, major: u8) -> Result<&'a [u8], CborError> {
        let start = self.pos;
        match self.head()? {
            (m, _, Arg::Value(n)) if m == major => self.take(n),
            _ => Err(CborError {
                offset: start,
                reason: "chunk of an indefinite string is not a definite string of its type",
            }),
        }
    }

    fn text(&mut self, n: u64) -> Result<String, CborError> {
        let start = self.pos;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| CborError {
                offset: start,
                reason: "text string is not valid UTF-8",
            })
    }
}

/// IEEE 754 half precision to f64 (RFC 8949 Appendix D).
fn f16_to_f64(half: u16) -> f64 {
    let exp = (half >> 10) & 0x1F;
    let mant = (half & 0x3FF) as f64;
    let magnitude = match exp {
        0 => mant * 2f64.powi(-24),
        31 if mant == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (mant + 1024.0) * 2f64.powi(exp as i32 - 25),
    };
    if half & 0x8000 != 0 {
        -magnitude
    } else {
        magnitude
    }
}

/// SenML's integer labels (RFC 8428 §6) by their names.
fn senml_label(key: &Item) -> Option<&'static str> {
    let label = match key {
        Item::Unsigned(n) => i64::try_from(*n).ok()?,
        Item::Negative(n) => -1 - i64::try_from(*n).ok()?,
        _ => return None,
    };
    Some(match label {
        -6 => "bs",
        -5 => "bv",
        -4 => "bu",
        -3 => "bt",
        -2 => "bn",
        -1 => "bver",
        0 => "n",
        1 => "u",
        2 => "v",
        3 => "vs",
        4 => "vb",
        5 => "s",
        6 => "t",
        7 => "ut",
        8 => "vd",
        _ => return None,
    })
}

fn write_item(out: &mut String, item: &Item, style: Style, indent: usize) {
    match item {
        Item::Unsigned(n) => out.push_str(&n.to_string()),
        Item::Negative(n) => out.push_str(&(-1 - *n as i128).to_string()),
        Item::Bytes(Chunks::Definite(b)) => write_bytes(out, b),
        Item::Bytes(Chunks::Indefinite(chunks)) => {
            write_chunks(out, chunks, |out, b| write_bytes(out, b))
        }
        Item::Text(Chunks::Definite(t)) => write_text(out, t),
        Item::Text(Chunks::Indefinite(chunks)) => {
            write_chunks(out, chunks, |out, t| write_text(out, t))
        }
        Item::Array { items, indefinite } => {
            let parts: Vec<Part> = items
                .iter()
                .map(|i| Part {
                    key: None,
                    value: i,
                })
                .collect();
            write_container(out, ('[', ']'), *indefinite, &parts, style, indent);
        }
        Item::Map {
            entries,
            indefinite,
        } => {
            let parts: Vec<Part> = entries
                .iter()
                .map(|(k, v)| Part {
                    key: Some(k),
                    value: v,
                })
                .collect();
            write_container(out, ('{', '}'), *indefinite, &parts, style, indent);
        }
        Item::Tag(tag, content) => {
            out.push_str(&tag.to_string());
            out.push('(');
            write_item(out, content, style, indent);
            out.push(')');
        }
        Item::Simple(v) => match v {
            20 => out.push_str("false"),
            21 => out.push_str("true"),
            22 => out.push_str("null"),
            23 => out.push_str("undefined"),
            _ => out.push_str(&format!("simple({v})")),
        },
        Item::Float(f) => out.push_str(&float(*f)),
    }
}

/// One element of an array, or one entry of a map.
struct Part<'a> {
    key: Option<&'a Item>,
    value: &'a Item,
}

fn write_part(out: &mut String, part: &Part, style: Style, indent: usize) {
    if let Some(key) = part.key {
        write_item(out, key, style, indent);
        if style.senml_labels {
            if let Some(name) = senml_label(key) {
                out.push_str(&format!(" /{name}/"));
            }
        }
        out.push_str(": ");
    }
    write_item(out, part.value, style, indent);
}

fn write_container(
    out: &mut String,
    (open, close): (char, char),
    indefinite: bool,
    parts: &[Part],
    style: Style,
    indent: usize,
) {
    let compact = Style {
        pretty: false,
        ..style
    };
    let mut line = String::new();
    line.push(open);
    if indefinite {
        line.push_str("_ ");
    }
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            line.push_str(", ");
        }
        write_part(&mut line, part, compact, indent);
    }
    line.push(close);
    // The column where this container starts is unknown here; the indent is a fair guess.
    if !style.pretty || parts.is_empty() || indent + line.len() <= PRETTY_WIDTH {
        out.push_str(&line);
        return;
    }
    out.push(open);
    if indefinite {
        out.push('_');
    }
    let inner = indent + 2;
    for (i, part) in parts.iter().enumerate() {
        out.push('\n');
        out.push_str(&" ".repeat(inner));
        write_part(out, part, style, inner);
        if i + 1 < parts.len() {
            out.push(',');
        }
    }
    out.push('\n');
    out.push_str(&" ".repeat(indent));
    out.push(close);
}

fn write_chunks<T>(out: &mut String, chunks: &[T], write: impl Fn(&mut String, &T)) {
    out.push_str("(_ ");
    for (i, chunk) in chunks.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write(out, chunk);
    }
    out.push(')');
}

fn write_bytes(out: &mut String, bytes: &[u8]) {
    out.push_str("h'");
    for b in bytes {
        out.push_str(&format!("{b:02x}"));
    }
    out.push('\'');
}

/// A JSON-style string literal, as the notation uses.
fn write_text(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A float that always reads as one: `1.0`, `1.5`, `1.0e+300`, `NaN`, `-Infinity`.
fn float(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // Debug gives the shortest round-trip form and always a `.0` or an exponent.
    let s = format!("{v:?}");
    match s.split_once('e') {
        Some((mantissa, exp)) => {
            let dot = if mantissa.contains('.') { "" } else { ".0" };
            let sign = if exp.starts_with('-') { "" } else { "+" };
            format!("{mantissa}{dot}e{sign}{exp}")
        }
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn diag(bytes: &[u8]) -> Result<String, CborError> {
        parse(bytes).map(|item| render(&item, Style::default()))
    }

    fn d(s: &str) -> String {
        diag(&hex(s)).unwrap()
    }

    #[test]
    fn rfc8949_appendix_a_integers() {
        assert_eq!(d("00"), "0");
        assert_eq!(d("17"), "23");
        assert_eq!(d("1818"), "24");
        assert_eq!(d("1903e8"), "1000");
        assert_eq!(d("1bffffffffffffffff"), "18446744073709551615");
        assert_eq!(d("20"), "-1");
        assert_eq!(d("3863"), "-100");
        assert_eq!(d("3bffffffffffffffff"), "-18446744073709551616");
    }

    #[test]
    fn rfc8949_appendix_a_floats() {
        assert_eq!(d("f93e00"), "1.5");
        assert_eq!(d("f90000"), "0.0");
        assert_eq!(d("f98000"), "-0.0");
        assert_eq!(d("f93c00"), "1.0");
        assert_eq!(d("fb3ff199999999999a"), "1.1");
        assert_eq!(d("f97bff"), "65504.0");
        assert_eq!(d("fa47c35000"), "100000.0");
        assert_eq!(d("fa7f7fffff"), "3.4028234663852886e+38");
        assert_eq!(d("fb7e37e43c8800759c"), "1.0e+300");
        assert_eq!(d("f90001"), "5.960464477539063e-8");
        assert_eq!(d("f9c400"), "-4.0");
        assert_eq!(d("fbc010666666666666"), "-4.1");
        assert_eq!(d("f97c00"), "Infinity");
        assert_eq!(d("f97e00"), "NaN");
        assert_eq!(d("f9fc00"), "-Infinity");
        assert_eq!(d("fa7fc00000"), "NaN");
        assert_eq!(d("fb7ff0000000000000"), "Infinity");
    }

    #[test]
    fn rfc8949_appendix_a_simple_and_tags() {
        assert_eq!(d("f4"), "false");
        assert_eq!(d("f5"), "true");
        assert_eq!(d("f6"), "null");
        assert_eq!(d("f7"), "undefined");
        assert_eq!(d("f0"), "simple(16)");
        assert_eq!(d("f8ff"), "simple(255)");
        assert_eq!(
            d("c074323031332d30332d32315432303a30343a30305a"),
            "0(\"2013-03-21T20:04:00Z\")"
        );
        assert_eq!(d("c11a514b67b0"), "1(1363896240)");
        assert_eq!(d("c1fb41d452d9ec200000"), "1(1363896240.5)");
        assert_eq!(d("d74401020304"), "23(h'01020304')");
        assert_eq!(d("d818456449455446"), "24(h'6449455446')");
    }

    #[test]
    fn rfc8949_appendix_a_strings() {
        assert_eq!(d("40"), "h''");
        assert_eq!(d("4401020304"), "h'01020304'");
        assert_eq!(d("60"), "\"\"");
        assert_eq!(d("6449455446"), "\"IETF\"");
        assert_eq!(d("62225c"), "\"\\\"\\\\\"");
        assert_eq!(d("62c3bc"), "\"\u{fc}\"");
        assert_eq!(d("63e6b0b4"), "\"\u{6c34}\"");
        assert_eq!(d("6101"), "\"\\u0001\"");
    }

    #[test]
    fn rfc8949_appendix_a_containers() {
        assert_eq!(d("80"), "[]");
        assert_eq!(d("83010203"), "[1, 2, 3]");
        assert_eq!(d("8301820203820405"), "[1, [2, 3], [4, 5]]");
        assert_eq!(d("a0"), "{}");
        assert_eq!(d("a201020304"), "{1: 2, 3: 4}");
        assert_eq!(d("a1616101"), "{\"a\": 1}");
        assert_eq!(d("a26161016162820203"), "{\"a\": 1, \"b\": [2, 3]}");
        assert_eq!(d("826161a161626163"), "[\"a\", {\"b\": \"c\"}]");
    }

    #[test]
    fn rfc8949_appendix_a_indefinite_lengths() {
        assert_eq!(d("5f42010243030405ff"), "(_ h'0102', h'030405')");
        assert_eq!(d("7f657374726561646d696e67ff"), "(_ \"strea\", \"ming\")");
        assert_eq!(d("9fff"), "[_ ]");
        assert_eq!(d("9f018202039f0405ffff"), "[_ 1, [2, 3], [_ 4, 5]]");
        assert_eq!(d("9f01820203820405ff"), "[_ 1, [2, 3], [4, 5]]");
        assert_eq!(d("83018202039f0405ff"), "[1, [2, 3], [_ 4, 5]]");
        assert_eq!(d("bf61610161629f0203ffff"), "{_ \"a\": 1, \"b\": [_ 2, 3]}");
        assert_eq!(d("826161bf61626163ff"), "[\"a\", {_ \"b\": \"c\"}]");
        assert_eq!(
            d("bf6346756ef563416d7421ff"),
            "{_ \"Fun\": true, \"Amt\": -2}"
        );
    }

    #[test]
    fn malformed_input_is_an_error_with_offset() {
        let err = |s: &str| diag(&hex(s)).unwrap_err();
        assert_eq!(diag(&[]).unwrap_err().reason, "no data");
        assert_eq!(err("18").offset, 1); // argument missing
        assert_eq!(err("62 61").reason, "data ends inside an item");
        assert_eq!(err("1c").reason, "reserved additional information 28-30");
        assert_eq!(err("ff").reason, "break outside an indefinite-length item");
        assert_eq!(err("1f").offset, 0);
        assert_eq!(
            err("f8 10").reason,
            "simple value below 32 in two-byte form"
        );
        assert_eq!(err("00 00").offset, 1);
        assert_eq!(err("9f 01").reason, "data ends inside an item");
        assert_eq!(err("5f 61 61 ff").offset, 1); // text chunk in a byte string
        assert_eq!(err("62 ff fe").reason, "text string is not valid UTF-8");
        assert_eq!(
            err("bf 01 ff").reason,
            "map ends after a key without a value"
        );
        // A huge declared count must fail fast, not allocate.
        assert_eq!(
            err("9b ffffffffffffffff").reason,
            "element count exceeds the remaining data"
        );
        assert_eq!(
            err("5b ffffffffffffffff").reason,
            "data ends inside an item"
        );
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let bytes = vec![0x81; 100_000];
        assert_eq!(
            diag(&bytes).unwrap_err().reason,
            "nesting deeper than 128 levels"
        );
        let bytes = vec![0xc1; 100_000];
        assert!(diag(&bytes).is_err());
    }

    #[test]
    fn pretty_breaks_long_containers_and_labels_senml() {
        // [{-2: "urn:dev:ow:10e2073a01080063:", 0: "voltage", 2: 120.1}, {0: "current", 2: 1.2}]
        let mut bytes = hex("82 a3 21 78 1c");
        bytes.extend_from_slice(b"urn:dev:ow:10e2073a01080063:");
        bytes.extend(hex("00 67"));
        bytes.extend_from_slice(b"voltage");
        bytes.extend(hex("02 fb 405e066666666666 a2 00 67"));
        bytes.extend_from_slice(b"current");
        bytes.extend(hex("02 fb 3ff3333333333333"));
        let item = parse(&bytes).unwrap();
        let style = Style {
            pretty: true,
            senml_labels: true,
        };
        assert_eq!(
            render(&item, style),
            "[\n  {-2 /bn/: \"urn:dev:ow:10e2073a01080063:\", 0 /n/: \"voltage\", 2 /v/: 120.1},\n  {0 /n/: \"current\", 2 /v/: 1.2}\n]"
        );
        assert_eq!(
            render(&item, Style::default()),
            "[{-2: \"urn:dev:ow:10e2073a01080063:\", 0: \"voltage\", 2: 120.1}, {0: \"current\", 2: 1.2}]"
        );
    }
}
