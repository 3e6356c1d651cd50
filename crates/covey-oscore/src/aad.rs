//! The additional authenticated data (RFC 8613 §5.4): the external_aad array, wrapped in
//! COSE's Enc_structure (RFC 8152 §5.3).

use crate::stack_buf::StackBuf;
use crate::{cbor, OscoreError, PartialIv, ALG_AEAD, MAX_ID_LEN};

/// The only OSCORE version.
const OSCORE_VERSION: u64 = 1;

/// The longest external_aad: the two array heads, version and algorithm, a kid of
/// [`MAX_ID_LEN`] and a five-byte Partial IV with their one-byte heads, and the empty options.
const EXTERNAL_AAD_MAX: usize = 4 + (1 + MAX_ID_LEN) + (1 + 5) + 1;
/// The longest AAD: the array head, "Encrypt0" with its head, h'', and the external_aad
/// with its one-byte head.
const AAD_MAX: usize = 1 + 9 + 1 + 1 + EXTERNAL_AAD_MAX;

/// The AAD of one message, built on the stack.
pub(crate) type Aad = StackBuf<AAD_MAX>;

/// external_aad = [oscore_version, [alg_aead], request_kid, request_piv, options (h'')].
fn external_aad(request_kid: &[u8], request_piv: &PartialIv) -> StackBuf<EXTERNAL_AAD_MAX> {
    let mut out = StackBuf::new();
    cbor::array(&mut out, 5);
    cbor::unsigned(&mut out, OSCORE_VERSION);
    cbor::array(&mut out, 1);
    cbor::unsigned(&mut out, ALG_AEAD);
    cbor::bytes(&mut out, request_kid);
    cbor::bytes(&mut out, request_piv.as_bytes());
    // No Class I options are defined, so the integrity-protected options are always empty.
    cbor::bytes(&mut out, &[]);
    out
}

/// The AEAD's AAD: Enc_structure = ["Encrypt0", h'' (protected), external_aad]; a kid
/// longer than [`MAX_ID_LEN`] is [`OscoreError::IdTooLong`].
pub(crate) fn aad(request_kid: &[u8], request_piv: &PartialIv) -> Result<Aad, OscoreError> {
    let external = external_aad(request_kid, request_piv);
    let external = external.written().ok_or(OscoreError::IdTooLong)?;
    let mut out = Aad::new();
    cbor::array(&mut out, 3);
    cbor::text(&mut out, "Encrypt0");
    cbor::bytes(&mut out, &[]);
    cbor::bytes(&mut out, external);
    match out.written() {
        Some(_) => Ok(out),
        None => Err(OscoreError::IdTooLong),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_kid_and_partial_iv_fit_and_a_longer_kid_is_refused() {
        let piv = PartialIv::from_sequence_number(crate::MAX_SEQUENCE_NUMBER).unwrap();
        assert!(aad(&[0xAA; MAX_ID_LEN], &piv).is_ok());
        assert_eq!(
            aad(&[0xAA; MAX_ID_LEN + 1], &piv).err(),
            Some(OscoreError::IdTooLong)
        );
    }

    fn piv(value: u64) -> PartialIv {
        PartialIv::from_sequence_number(value).unwrap()
    }

    // RFC 8613 C.4 (kid h'') and C.5 (kid h'00'), both with Partial IV 0x14.
    #[test]
    fn aad_arrays_match_rfc_8613_c_4_and_c_5() {
        let aad = |kid: &[u8], piv: &PartialIv| aad(kid, piv).unwrap().written().unwrap().to_vec();
        let external_aad =
            |kid: &[u8], piv: &PartialIv| external_aad(kid, piv).written().unwrap().to_vec();
        assert_eq!(
            external_aad(&[], &piv(20)),
            [0x85, 0x01, 0x81, 0x0a, 0x40, 0x41, 0x14, 0x40]
        );
        assert_eq!(
            aad(&[], &piv(20)),
            [
                0x83, 0x68, 0x45, 0x6e, 0x63, 0x72, 0x79, 0x70, 0x74, 0x30, 0x40, 0x48, 0x85, 0x01,
                0x81, 0x0a, 0x40, 0x41, 0x14, 0x40
            ]
        );
        assert_eq!(
            external_aad(&[0x00], &piv(20)),
            [0x85, 0x01, 0x81, 0x0a, 0x41, 0x00, 0x41, 0x14, 0x40]
        );
        assert_eq!(
            aad(&[0x00], &piv(20)),
            [
                0x83, 0x68, 0x45, 0x6e, 0x63, 0x72, 0x79, 0x70, 0x74, 0x30, 0x40, 0x49, 0x85, 0x01,
                0x81, 0x0a, 0x41, 0x00, 0x41, 0x14, 0x40
            ]
        );
    }
}
