//! A Sender or Recipient ID held inline: at most [`MAX_ID_LEN`] bytes, so binding a response
//! to its request copies no heap memory.

use crate::{OscoreError, MAX_ID_LEN};

/// A kid (RFC 8613 §3.1: a Sender or Recipient ID), at most [`MAX_ID_LEN`] bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Kid {
    bytes: [u8; MAX_ID_LEN],
    len: u8,
}

impl Kid {
    /// `id` as a kid, or [`OscoreError::IdTooLong`].
    pub fn new(id: &[u8]) -> Result<Kid, OscoreError> {
        let mut bytes = [0; MAX_ID_LEN];
        bytes
            .get_mut(..id.len())
            .ok_or(OscoreError::IdTooLong)?
            .copy_from_slice(id);
        Ok(Kid {
            bytes,
            len: id.len() as u8,
        })
    }

    /// Its bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl core::ops::Deref for Kid {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl core::fmt::Debug for Kid {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Kid({:02x?})", self.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_up_to_seven_bytes_fit_and_longer_are_refused() {
        assert_eq!(Kid::new(&[]).unwrap().as_slice(), &[] as &[u8]);
        assert_eq!(
            &*Kid::new(&[1, 2, 3, 4, 5, 6, 7]).unwrap(),
            &[1, 2, 3, 4, 5, 6, 7]
        );
        assert_eq!(Kid::new(&[0; 8]), Err(OscoreError::IdTooLong));
        assert_ne!(Kid::new(&[0]).unwrap(), Kid::new(&[]).unwrap());
    }
}
