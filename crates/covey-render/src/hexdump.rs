//! Bytes as hex: a compact string for values, and a dump with offsets and ASCII for payloads.

use std::fmt::Write;

/// Lower-case hex with no separators (`1a2b`).
pub fn hex_string(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        // Writing to a String cannot fail.
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// A `hexdump -C`-style dump: offset, 16 bytes per line in two groups, printable ASCII.
pub fn hex_dump(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (line, chunk) in bytes.chunks(16).enumerate() {
        let _ = write!(out, "{:04x}  ", line * 16);
        for i in 0..16 {
            match chunk.get(i) {
                Some(b) => {
                    let _ = write!(out, "{b:02x} ");
                }
                None => out.push_str("   "),
            }
            if i == 7 {
                out.push(' ');
            }
        }
        out.push_str(" |");
        out.extend(chunk.iter().map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        }));
        out.push_str("|\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_is_lower_case_without_separators() {
        assert_eq!(hex_string(&[0x1a, 0x2b, 0x00]), "1a2b00");
        assert_eq!(hex_string(&[]), "");
    }

    #[test]
    fn dump_has_offsets_groups_and_ascii() {
        let bytes: Vec<u8> = (0x41..0x41 + 18).chain([0x00, 0xff]).collect();
        assert_eq!(
            hex_dump(&bytes),
            "0000  41 42 43 44 45 46 47 48  49 4a 4b 4c 4d 4e 4f 50  |ABCDEFGHIJKLMNOP|\n\
             0010  51 52 00 ff                                       |QR..|\n"
        );
        assert_eq!(hex_dump(&[]), "");
    }
}
