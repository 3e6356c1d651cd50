//! The additional authenticated data (RFC 8613 §5.4): the external_aad array, wrapped in
//! COSE's Enc_structure (RFC 8152 §5.3).

use crate::{cbor, PartialIv, ALG_AEAD};
use alloc::vec::Vec;

/// The only OSCORE version.
const OSCORE_VERSION: u64 = 1;

/// external_aad = [oscore_version, [alg_aead], request_kid, request_piv, options (h'')].
fn external_aad(request_kid: &[u8], request_piv: &PartialIv) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + request_kid.len());
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

/// The AEAD's AAD: Enc_structure = ["Encrypt0", h'' (protected), external_aad].
pub(crate) fn aad(request_kid: &[u8], request_piv: &PartialIv) -> Vec<u8> {
    let external = external_aad(request_kid, request_piv);
    let mut out = Vec::with_capacity(12 + external.len());
    cbor::array(&mut out, 3);
    cbor::text(&mut out, "Encrypt0");
    cbor::bytes(&mut out, &[]);
    cbor::bytes(&mut out, &external);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piv(value: u64) -> PartialIv {
        PartialIv::from_sequence_number(value).unwrap()
    }

    // RFC 8613 C.4 (kid h'') and C.5 (kid h'00'), both with Partial IV 0x14.
    #[test]
    fn aad_arrays_match_rfc_8613_c_4_and_c_5() {
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
