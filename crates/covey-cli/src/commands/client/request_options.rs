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
    ContentFormat::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = ContentFormat::short_names().collect();
        usage(format!(
            "unknown content format {name:?}: give a number, a media type, or one of {}",
            names.join(", ")
        ))
    })
}

/// A token from hex.
pub fn token(hex: &str) -> Result<Vec<u8>, Failure> {
    let bytes = parse_hex(hex).map_err(|e| usage(format!("bad token: {e}")))?;
    if bytes.len() > 8 {
        return Err(usage("a token is at most 8 bytes"));
    }
    Ok(bytes)
}

/// An option `NUM,VALUE`: the number (or name) and the value encoded as the option's format
/// wants (a number for uint options, nothing for empty ones, text or `0x` hex otherwise),
/// checked against its registered length.
pub fn option(text: &str) -> Result<(OptionNumber, Vec<u8>), Failure> {
    let (num, value) = text
        .split_once(',')
        .map_or((text, ""), |(n, v)| (n.trim(), v));
    let number = option_number(num, text)?;
    let hex = |digits: &str| parse_hex(digits).map_err(|e| usage(format!("-O {text}: {e}")));
    let Some(def) = number.definition() else {
        // Unregistered: no format to check.
        return match value.strip_prefix("0x") {
            Some(digits) => Ok((number, hex(digits)?)),
            None => Ok((number, value.as_bytes().to_vec())),
        };
    };
    let bytes = match (def.format, value.strip_prefix("0x")) {
        (OptionFormat::Empty, _) if !value.is_empty() => {
            return Err(usage(format!("-O {text}: {} takes no value", def.name)))
        }
        (OptionFormat::Empty, _) => Vec::new(),
        (_, Some(digits)) => hex(digits)?,
        (OptionFormat::Uint, None) => {
            let largest = uint_max(def.max_len);
            let n = value
                .parse::<u64>()
                .ok()
                .filter(|n| *n <= largest)
                .ok_or_else(|| {
                    usage(format!(
                        "-O {text}: {} takes a number from 0 to {largest}, not {value:?}",
                        def.name
                    ))
                })?;
            let mut buf = [0u8; 4];
            // `largest` fits in four bytes: the registry has no longer uint option.
            uint::encode(n as u32, &mut buf).to_vec()
        }
        (OptionFormat::String | OptionFormat::Opaque, None) => value.as_bytes().to_vec(),
    };
    if !number.length_is_valid(bytes.len()) {
        return Err(usage(format!(
            "-O {text}: {} is {}-{} bytes long, not {}",
            def.name,
            def.min_len,
            def.max_len,
            bytes.len()
        )));
    }
    Ok((number, bytes))
}

/// An option number (0-65535) or a registered name.
fn option_number(num: &str, text: &str) -> Result<OptionNumber, Failure> {
    match num.parse::<u64>() {
        Ok(n) => u16::try_from(n).map(OptionNumber).map_err(|_| {
            usage(format!(
                "-O {text}: option number {n} is out of range (0-65535)"
            ))
        }),
        Err(_) => OptionNumber::from_name(num)
            .ok_or_else(|| usage(format!("unknown option {num:?} in -O {text}"))),
    }
}

/// The largest uint that fits in `max_len` bytes (at most four).
fn uint_max(max_len: u16) -> u64 {
    (1u64 << (8 * u32::from(max_len.min(4)))) - 1
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
        assert_eq!(
            option("max-age,0x0102").unwrap(),
            (OptionNumber::MAX_AGE, vec![1, 2])
        );
    }

    #[test]
    fn option_values_must_fit_the_format() {
        let message = |t: &str| option(t).unwrap_err().message;
        assert_eq!(
            message("Max-Age,abc"),
            "-O Max-Age,abc: Max-Age takes a number from 0 to 4294967295, not \"abc\""
        );
        assert_eq!(
            message("Accept,70000"),
            "-O Accept,70000: Accept takes a number from 0 to 65535, not \"70000\""
        );
        assert_eq!(
            message("99999,x"),
            "-O 99999,x: option number 99999 is out of range (0-65535)"
        );
        assert_eq!(
            message("If-None-Match,x"),
            "-O If-None-Match,x: If-None-Match takes no value"
        );
        assert_eq!(message("ETag,"), "-O ETag,: ETag is 1-8 bytes long, not 0");
        assert_eq!(message("bogus,1"), "unknown option \"bogus\" in -O bogus,1");
        assert_eq!(
            message("4,0xzz"),
            "-O 4,0xzz: bad hex at byte 0 of the input: 'z' is not a hex digit"
        );
        assert_eq!(token("0a0B").unwrap(), [10, 11]);
        assert!(token("010203040506070809").is_err());
        assert_eq!(content_format("json").unwrap(), ContentFormat::JSON);
        assert_eq!(content_format("60").unwrap(), ContentFormat::CBOR);
        assert!(method("BREW").is_err());
    }
}
