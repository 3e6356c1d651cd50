//! Hex text of the tests' datagrams as bytes.

/// The bytes of space-separated hex pairs, as in `"42 01 7d 34"`.
pub fn parse_hex(text: &str) -> Result<Vec<u8>, std::num::ParseIntError> {
    text.split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16))
        .collect()
}
