//! The request/response matching token (RFC 7252 §5.3.1).

use crate::MAX_TOKEN_LEN;

/// A token of 0–8 bytes stored inline, so it is `Copy` and never allocates.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Token {
    len: u8,
    bytes: [u8; MAX_TOKEN_LEN],
}

impl Token {
    /// The empty token.
    pub const EMPTY: Token = Token {
        len: 0,
        bytes: [0; MAX_TOKEN_LEN],
    };

    /// A token holding `bytes`, or `None` when longer than 8 bytes.
    pub fn new(bytes: &[u8]) -> Option<Token> {
        if bytes.len() > MAX_TOKEN_LEN {
            return None;
        }
        let mut t = Token::EMPTY;
        t.bytes[..bytes.len()].copy_from_slice(bytes);
        t.len = bytes.len() as u8;
        Some(t)
    }

    /// A token of the `len` (clamped to 8) low-order bytes of `value`, big-endian.
    pub fn from_u64(value: u64, len: usize) -> Token {
        let len = len.min(MAX_TOKEN_LEN);
        let be = value.to_be_bytes();
        let mut t = Token::EMPTY;
        t.bytes[..len].copy_from_slice(&be[MAX_TOKEN_LEN - len..]);
        t.len = len as u8;
        t
    }

    /// The token's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Number of bytes (0–8).
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True for the zero-length token.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl core::hash::Hash for Token {
    /// One word write: tokens key the tables a client consults for every response.
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        // Unused bytes are always zero, so the length disambiguates the rest.
        state.write_u64(u64::from_le_bytes(self.bytes) ^ ((self.len as u64) << 59));
    }
}

impl core::fmt::Debug for Token {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Token(0x{self})")
    }
}

impl core::fmt::Display for Token {
    /// Lower-case hex, no separators; empty for the empty token.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn holds_up_to_eight_bytes() {
        assert_eq!(Token::new(&[1, 2]).unwrap().as_bytes(), &[1, 2]);
        assert!(Token::new(&[0; 9]).is_none());
        assert_eq!(Token::from_u64(0x1a2b, 2).to_string(), "1a2b");
        assert!(Token::EMPTY.is_empty());
    }
}
