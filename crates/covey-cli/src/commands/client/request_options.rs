//! Reading the client flags into request parts: method, formats, token, -O options, payload.

use std::io::Read;

use covey_core::{uint, Code, ContentFormat, OptionFormat, OptionNumber};

use crate::exit::{ExitKind, Failure};
use crate::input::parse_hex;

/// Largest payload read from a file or standard input.
const MAX_PAYLOAD: u64 = 16 << 20;

fn usage(message: impl Into<String>) -> Failure {
    Failure::new(ExitKind::Usage, message)
}

/// A method by name.
pub fn method(name: &str) -> Result<Code, Failure> {
    Code::method_from_name(name).ok_or_else(|| usage(format!("unknown method {name:?}")))
}

/// A Content-Format by name or number.
pub fn content_format(name: &str) -> Result<ContentFormat, Failure> {
    ContentFormat::from_name(name).ok_or_else(|| usage(format!("unknown content format {name:?}")))
}

/// A token from hex.
pub fn token(hex: &str) -> Result<Vec<u8>, Failure> {
    let bytes = parse_hex(hex).map_err(|e| usage(format!("bad token: {e}")))?;
    if bytes.len() > 8 {
        return Err(usage("a token is at most 8 bytes"));
    }
    Ok(bytes)
}

/// An option `NUM,VALUE`: the number (or name) and the encoded value.
pub fn option(text: &str) -> Result<(OptionNumber, Vec<u8>), Failure> {
    let (num, value) = text
        .split_once(',')
        .map_or((text, ""), |(n, v)| (n.trim(), v));
    let number = match num.parse::<u16>() {
        Ok(n) => OptionNumber(n),
        Err(_) => OptionNumber::from_name(num)
            .ok_or_else(|| usage(format!("unknown option {num:?} in -O {text}")))?,
    };
    if let Some(hex) = value.strip_prefix("0x") {
        let bytes = parse_hex(hex).map_err(|e| usage(format!("-O {text}: {e}")))?;
        return Ok((number, bytes));
    }
    let is_uint = number
        .definition()
        .is_some_and(|d| d.format == OptionFormat::Uint);
    if is_uint {
        if let Ok(n) = value.parse::<u32>() {
            let mut buf = [0u8; 4];
            return Ok((number, uint::encode(n, &mut buf).to_vec()));
        }
    }
    Ok((number, value.as_bytes().to_vec()))
}

/// The payload: text as given, `@FILE` read from a file, `@-` from standard input.
pub fn payload(spec: &str) -> Result<Vec<u8>, Failure> {
    let Some(source) = spec.strip_prefix('@') else {
        return Ok(spec.as_bytes().to_vec());
    };
    let mut out = Vec::new();
    let read = if source == "-" {
        std::io::stdin()
            .lock()
            .take(MAX_PAYLOAD + 1)
            .read_to_end(&mut out)
    } else {
        std::fs::File::open(source).and_then(|f| f.take(MAX_PAYLOAD + 1).read_to_end(&mut out))
    };
    read.map_err(|e| {
        Failure::new(
            ExitKind::Other,
            format!("cannot read payload {source}: {e}"),
        )
    })?;
    if out.len() as u64 > MAX_PAYLOAD {
        return Err(Failure::new(
            ExitKind::Other,
            format!("payload {source} is larger than {MAX_PAYLOAD} bytes"),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_by_number_name_and_format() {
        assert_eq!(
            option("11,temp").unwrap(),
            (OptionNumber::URI_PATH, b"temp".to_vec())
        );
        assert_eq!(
            option("accept,50").unwrap(),
            (OptionNumber::ACCEPT, vec![50])
        );
        assert_eq!(option("14,0").unwrap(), (OptionNumber::MAX_AGE, vec![]));
        assert_eq!(
            option("4,0x0a0b").unwrap(),
            (OptionNumber::ETAG, vec![10, 11])
        );
        assert_eq!(option("5").unwrap(), (OptionNumber::IF_NONE_MATCH, vec![]));
        assert_eq!(
            option("65000,x").unwrap(),
            (OptionNumber(65000), b"x".to_vec())
        );
        assert!(option("nope,1").is_err());
        assert_eq!(token("0a0B").unwrap(), [10, 11]);
        assert!(token("010203040506070809").is_err());
        assert_eq!(content_format("json").unwrap(), ContentFormat::JSON);
        assert_eq!(content_format("60").unwrap(), ContentFormat::CBOR);
        assert!(method("BREW").is_err());
    }
}
