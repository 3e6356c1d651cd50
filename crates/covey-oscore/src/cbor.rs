//! The few CBOR items (RFC 8949 §3) OSCORE derives keys and authenticates over: definite
//! arrays, byte and text strings, unsigned integers and null. Hand-written because these
//! structures are fixed and tiny, so a CBOR library would only add code.

use crate::stack_buf::ByteSink;

/// Major types used here (RFC 8949 §3.1).
const UNSIGNED: u8 = 0;
const BYTES: u8 = 2;
const TEXT: u8 = 3;
const ARRAY: u8 = 4;
/// The simple value null (RFC 8949 §3.3).
const NULL: u8 = 0xF6;

/// Writes an item head: major type and argument in the shortest form.
fn head(out: &mut impl ByteSink, major: u8, argument: u64) {
    let major = major << 5;
    match argument {
        0..=23 => out.put(&[major | argument as u8]),
        24..=0xFF => out.put(&[major | 24, argument as u8]),
        0x100..=0xFFFF => {
            out.put(&[major | 25]);
            out.put(&(argument as u16).to_be_bytes());
        }
        0x1_0000..=0xFFFF_FFFF => {
            out.put(&[major | 26]);
            out.put(&(argument as u32).to_be_bytes());
        }
        _ => {
            out.put(&[major | 27]);
            out.put(&argument.to_be_bytes());
        }
    }
}

/// Starts a definite-length array of `len` items.
pub(crate) fn array(out: &mut impl ByteSink, len: usize) {
    head(out, ARRAY, len as u64);
}

/// Writes a byte string.
pub(crate) fn bytes(out: &mut impl ByteSink, value: &[u8]) {
    head(out, BYTES, value.len() as u64);
    out.put(value);
}

/// Writes a text string.
pub(crate) fn text(out: &mut impl ByteSink, value: &str) {
    head(out, TEXT, value.len() as u64);
    out.put(value.as_bytes());
}

/// Writes an unsigned integer.
pub(crate) fn unsigned(out: &mut impl ByteSink, value: u64) {
    head(out, UNSIGNED, value);
}

/// Writes null.
pub(crate) fn null(out: &mut impl ByteSink) {
    out.put(&[NULL]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    fn encoded(write: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out);
        out
    }

    // RFC 8949 Appendix A.
    #[test]
    fn unsigned_integers_match_rfc_8949_appendix_a() {
        let cases: [(u64, &[u8]); 8] = [
            (0, &[0x00]),
            (10, &[0x0a]),
            (23, &[0x17]),
            (24, &[0x18, 0x18]),
            (100, &[0x18, 0x64]),
            (1000, &[0x19, 0x03, 0xe8]),
            (1_000_000, &[0x1a, 0x00, 0x0f, 0x42, 0x40]),
            (
                1_000_000_000_000,
                &[0x1b, 0x00, 0x00, 0x00, 0xe8, 0xd4, 0xa5, 0x10, 0x00],
            ),
        ];
        for (value, wire) in cases {
            assert_eq!(encoded(|o| unsigned(o, value)), wire, "{value}");
        }
    }

    #[test]
    fn strings_arrays_and_null_match_rfc_8949_appendix_a() {
        assert_eq!(encoded(|o| bytes(o, &[])), [0x40]);
        assert_eq!(
            encoded(|o| bytes(o, &[1, 2, 3, 4])),
            [0x44, 0x01, 0x02, 0x03, 0x04]
        );
        assert_eq!(encoded(|o| text(o, "")), [0x60]);
        assert_eq!(encoded(|o| text(o, "IETF")), [0x64, 0x49, 0x45, 0x54, 0x46]);
        assert_eq!(encoded(|o| array(o, 0)), [0x80]);
        assert_eq!(
            encoded(|o| {
                array(o, 3);
                unsigned(o, 1);
                unsigned(o, 2);
                unsigned(o, 3);
            }),
            [0x83, 0x01, 0x02, 0x03]
        );
        assert_eq!(encoded(null), [0xf6]);
        // A 25-item array needs the one-byte argument.
        assert_eq!(encoded(|o| array(o, 25))[..2], vec![0x98, 0x19][..]);
    }
}
