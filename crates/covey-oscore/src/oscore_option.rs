//! The OSCORE option value (RFC 8613 §6.1): flag byte, Partial IV, kid context, kid.

use crate::stack_buf::{ByteSink, StackBuf};
use crate::{OscoreError, PartialIv, MAX_ID_LEN};
use alloc::vec::Vec;

/// The longest option value a context sends: flags, a five-byte Partial IV, a kid context of
/// up to 255 bytes with its length, and a kid of [`MAX_ID_LEN`].
const MAX_OPTION_LEN: usize = 1 + 5 + 1 + 255 + MAX_ID_LEN;

/// Low three bits of the flag byte: the Partial IV length n.
const PIV_LEN_MASK: u8 = 0x07;
/// The 'kid' flag k.
const KID_FLAG: u8 = 0x08;
/// The 'kid context' flag h.
const KID_CONTEXT_FLAG: u8 = 0x10;
/// Bits reserved for future use: a message with any of them set is malformed.
const RESERVED_FLAGS: u8 = 0xE0;

/// The compressed COSE header parameters carried in the OSCORE option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OscoreOption<'a> {
    /// The Partial IV, if present.
    pub partial_iv: Option<PartialIv>,
    /// The 'kid context', if present.
    pub kid_context: Option<&'a [u8]>,
    /// The 'kid', if present (it may be present and empty).
    pub kid: Option<&'a [u8]>,
}

impl<'a> OscoreOption<'a> {
    /// Decompresses an option value; any structure §6.1 does not allow is malformed.
    pub fn parse(value: &'a [u8]) -> Result<OscoreOption<'a>, OscoreError> {
        let Some((&flags, mut rest)) = value.split_first() else {
            return Ok(OscoreOption::default());
        };
        // All-zero flags must be sent as an empty value; n = 6 and 7 are reserved.
        let piv_len = usize::from(flags & PIV_LEN_MASK);
        if flags & RESERVED_FLAGS != 0 || flags == 0 || piv_len > 5 {
            return Err(OscoreError::MalformedOption);
        }
        let partial_iv = match piv_len {
            0 => None,
            n => Some(PartialIv::from_bytes(take(&mut rest, n)?)?),
        };
        let kid_context = if flags & KID_CONTEXT_FLAG != 0 {
            let len = usize::from(take(&mut rest, 1)?[0]);
            Some(take(&mut rest, len)?)
        } else {
            None
        };
        // The kid is whatever remains.
        let kid = if flags & KID_FLAG != 0 {
            Some(core::mem::take(&mut rest))
        } else {
            None
        };
        if !rest.is_empty() {
            return Err(OscoreError::MalformedOption);
        }
        Ok(OscoreOption {
            partial_iv,
            kid_context,
            kid,
        })
    }

    /// The compressed option value; empty when nothing is present.
    pub fn encode(&self) -> Result<Vec<u8>, OscoreError> {
        let mut out = Vec::new();
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// [`Self::encode`] on the stack, as every protected message needs it.
    pub(crate) fn encode_inline(&self) -> Result<StackBuf<MAX_OPTION_LEN>, OscoreError> {
        let mut out = StackBuf::new();
        self.encode_into(&mut out)?;
        out.written().ok_or(OscoreError::IdTooLong)?;
        Ok(out)
    }

    fn encode_into(&self, out: &mut impl ByteSink) -> Result<(), OscoreError> {
        let piv = self
            .partial_iv
            .as_ref()
            .map_or(&[][..], PartialIv::as_bytes);
        let mut flags = piv.len() as u8;
        if self.kid.is_some() {
            flags |= KID_FLAG;
        }
        if self.kid_context.is_some() {
            flags |= KID_CONTEXT_FLAG;
        }
        if flags == 0 {
            return Ok(());
        }
        out.put(&[flags]);
        out.put(piv);
        if let Some(context) = self.kid_context {
            let len = u8::try_from(context.len()).map_err(|_| OscoreError::IdContextTooLong)?;
            out.put(&[len]);
            out.put(context);
        }
        if let Some(kid) = self.kid {
            out.put(kid);
        }
        Ok(())
    }
}

/// Splits the first `len` bytes off `rest`, or fails when it is shorter.
fn take<'a>(rest: &mut &'a [u8], len: usize) -> Result<&'a [u8], OscoreError> {
    if rest.len() < len {
        return Err(OscoreError::MalformedOption);
    }
    let (head, tail) = rest.split_at(len);
    *rest = tail;
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 8613 C.6: Partial IV 0x14, kid context 0x37cbf3210017a2d3, empty kid.
    const C6_VALUE: [u8; 11] = [
        0x19, 0x14, 0x08, 0x37, 0xcb, 0xf3, 0x21, 0x00, 0x17, 0xa2, 0xd3,
    ];

    #[test]
    fn values_of_rfc_8613_appendix_c_decompress_and_recompress() {
        for value in [
            &[0x09, 0x14][..],
            &[0x09, 0x14, 0x00],
            &C6_VALUE,
            &[0x01, 0x00],
            &[],
        ] {
            let option = OscoreOption::parse(value).unwrap();
            assert_eq!(option.encode().unwrap(), value);
        }
        let c6 = OscoreOption::parse(&C6_VALUE).unwrap();
        assert_eq!(c6.partial_iv.unwrap().as_bytes(), [0x14]);
        assert_eq!(c6.kid_context, Some(&C6_VALUE[3..]));
        assert_eq!(c6.kid, Some(&[][..]));
    }

    #[test]
    fn malformed_values_are_refused() {
        let malformed: [&[u8]; 8] = [
            &[0x00],                      // all-zero flags must be an empty value
            &[0x21, 0x14],                // reserved bit
            &[0x81, 0x14],                // reserved bit
            &[0x06, 1, 2, 3, 4, 5, 6],    // n = 6
            &[0x07, 1, 2, 3, 4, 5, 6, 7], // n = 7
            &[0x02, 0x14],                // Partial IV truncated
            &[0x11, 0x14, 0x09, 0x37],    // kid context longer than the option
            &[0x01, 0x14, 0xAA],          // trailing bytes without the kid flag
        ];
        for value in malformed {
            assert_eq!(
                OscoreOption::parse(value),
                Err(OscoreError::MalformedOption),
                "{value:02x?}"
            );
        }
        // The kid-context length byte itself missing.
        assert!(OscoreOption::parse(&[0x11, 0x14]).is_err());
    }
}
