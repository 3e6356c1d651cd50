//! The Partial IV (RFC 8613 §5): a sender sequence number in the fewest bytes, at most five.

use crate::OscoreError;

/// Largest sender sequence number: the Partial IV has at most 40 bits (RFC 8613 §7.2.1).
pub const MAX_SEQUENCE_NUMBER: u64 = (1 << 40) - 1;

/// Largest Partial IV length in bytes.
pub const MAX_PARTIAL_IV_LEN: usize = 5;

/// A Partial IV as carried in the OSCORE option: 1–5 bytes, big-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PartialIv {
    bytes: [u8; MAX_PARTIAL_IV_LEN],
    len: u8,
}

impl PartialIv {
    /// The Partial IV of sequence number `value`: fewest bytes, 0 as one zero byte.
    pub fn from_sequence_number(value: u64) -> Result<PartialIv, OscoreError> {
        if value > MAX_SEQUENCE_NUMBER {
            return Err(OscoreError::SequenceNumberExhausted);
        }
        let all = value.to_be_bytes();
        let len = (8 - value.leading_zeros() as usize / 8).max(1);
        let mut bytes = [0; MAX_PARTIAL_IV_LEN];
        bytes[..len].copy_from_slice(&all[8 - len..]);
        Ok(PartialIv {
            bytes,
            len: len as u8,
        })
    }

    /// The Partial IV read from the wire, kept byte for byte (it enters the AAD as sent).
    pub fn from_bytes(wire: &[u8]) -> Result<PartialIv, OscoreError> {
        if wire.is_empty() || wire.len() > MAX_PARTIAL_IV_LEN {
            return Err(OscoreError::MalformedOption);
        }
        let mut bytes = [0; MAX_PARTIAL_IV_LEN];
        bytes[..wire.len()].copy_from_slice(wire);
        Ok(PartialIv {
            bytes,
            len: wire.len() as u8,
        })
    }

    /// The bytes as sent.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The sequence number it encodes.
    pub fn value(&self) -> u64 {
        self.as_bytes()
            .iter()
            .fold(0, |acc, &b| (acc << 8) | u64::from(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_take_the_fewest_bytes() {
        // RFC 8613 C.4 (20 → 0x14) and C.8 (0 → 0x00).
        assert_eq!(
            PartialIv::from_sequence_number(20).unwrap().as_bytes(),
            [0x14]
        );
        assert_eq!(
            PartialIv::from_sequence_number(0).unwrap().as_bytes(),
            [0x00]
        );
        assert_eq!(
            PartialIv::from_sequence_number(0x1_0000)
                .unwrap()
                .as_bytes(),
            [0x01, 0x00, 0x00]
        );
        let max = PartialIv::from_sequence_number(MAX_SEQUENCE_NUMBER).unwrap();
        assert_eq!(max.as_bytes(), [0xff; 5]);
        assert_eq!(max.value(), MAX_SEQUENCE_NUMBER);
        assert_eq!(
            PartialIv::from_sequence_number(MAX_SEQUENCE_NUMBER + 1),
            Err(OscoreError::SequenceNumberExhausted)
        );
    }

    #[test]
    fn wire_bytes_are_kept_and_bounded() {
        let piv = PartialIv::from_bytes(&[0x00, 0x14]).unwrap();
        assert_eq!(piv.as_bytes(), [0x00, 0x14]);
        assert_eq!(piv.value(), 20);
        assert!(PartialIv::from_bytes(&[]).is_err());
        assert!(PartialIv::from_bytes(&[1; 6]).is_err());
    }
}
