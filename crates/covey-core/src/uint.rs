//! Unsigned-integer option values (RFC 7252 §3.2): network order, fewest bytes, 0 is empty.

/// Bytes needed to write `value` in the fewest bytes (0 for zero).
pub const fn encoded_len(value: u32) -> usize {
    (4 - (value.leading_zeros() / 8)) as usize
}

/// Writes `value` into `out` in the fewest bytes and returns that slice of `out`.
pub fn encode(value: u32, out: &mut [u8; 4]) -> &[u8] {
    let len = encoded_len(value);
    *out = value.to_be_bytes();
    &out[4 - len..]
}

/// Reads a uint value of up to 4 bytes, accepting leading zeros; `None` when longer than 4
/// bytes after stripping leading zeros.
pub fn decode(bytes: &[u8]) -> Option<u32> {
    let first_significant = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    let significant = &bytes[first_significant..];
    if significant.len() > 4 {
        return None;
    }
    Some(
        significant
            .iter()
            .fold(0u32, |acc, &b| (acc << 8) | b as u32),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fewest_bytes() {
        let mut buf = [0; 4];
        assert_eq!(encode(0, &mut buf), &[] as &[u8]);
        assert_eq!(encode(1, &mut buf), &[1]);
        assert_eq!(encode(0x100, &mut buf), &[1, 0]);
        assert_eq!(encode(0x01_0000, &mut buf), &[1, 0, 0]);
        assert_eq!(encode(u32::MAX, &mut buf), &[0xff; 4]);
    }

    #[test]
    fn accepts_leading_zeros() {
        assert_eq!(decode(&[]), Some(0));
        assert_eq!(decode(&[0, 0, 5]), Some(5));
        assert_eq!(decode(&[0, 0, 0, 0, 0, 0, 1, 0]), Some(256));
        assert_eq!(decode(&[1, 0, 0, 0, 0]), None);
    }
}
