//! Key and IV derivation (RFC 8613 §3.2.1): HKDF-SHA-256 over the Master Secret and Salt,
//! with the CBOR `info` array naming what is derived.

use crate::{cbor, ALG_AEAD};
use alloc::vec::Vec;
use hkdf::Hkdf;
use sha2::Sha256;

/// What an output is for: the `type` text of the `info` array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Derived {
    /// A Sender or Recipient Key.
    Key,
    /// The Common IV.
    Iv,
}

/// The `info` array: [id, id_context or null, alg_aead, type, L].
pub(crate) fn info(id: &[u8], id_context: Option<&[u8]>, what: Derived, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + id.len() + id_context.map_or(0, <[u8]>::len));
    cbor::array(&mut out, 5);
    cbor::bytes(&mut out, id);
    match id_context {
        Some(context) => cbor::bytes(&mut out, context),
        None => cbor::null(&mut out),
    }
    cbor::unsigned(&mut out, ALG_AEAD);
    cbor::text(
        &mut out,
        match what {
            Derived::Key => "Key",
            Derived::Iv => "IV",
        },
    );
    cbor::unsigned(&mut out, len as u64);
    out
}

/// Fills `out` with HKDF-SHA-256(salt, secret, info); an empty salt is the default one.
pub(crate) fn expand(master_secret: &[u8], master_salt: &[u8], info: &[u8], out: &mut [u8]) {
    let hkdf = Hkdf::<Sha256>::new(Some(master_salt), master_secret);
    // Outputs here are 13 or 16 bytes, far below HKDF's 255 × 32 limit, so this cannot fail.
    let _ = hkdf.expand(info, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 8613 C.1.1 and C.3.1.
    #[test]
    fn info_arrays_match_rfc_8613_appendix_c() {
        assert_eq!(
            info(&[], None, Derived::Key, 16),
            [0x85, 0x40, 0xf6, 0x0a, 0x63, 0x4b, 0x65, 0x79, 0x10]
        );
        assert_eq!(
            info(&[0x01], None, Derived::Key, 16),
            [0x85, 0x41, 0x01, 0xf6, 0x0a, 0x63, 0x4b, 0x65, 0x79, 0x10]
        );
        assert_eq!(
            info(&[], None, Derived::Iv, 13),
            [0x85, 0x40, 0xf6, 0x0a, 0x62, 0x49, 0x56, 0x0d]
        );
        let id_context = [0x37, 0xcb, 0xf3, 0x21, 0x00, 0x17, 0xa2, 0xd3];
        assert_eq!(
            info(&[0x01], Some(&id_context), Derived::Key, 16),
            [
                0x85, 0x41, 0x01, 0x48, 0x37, 0xcb, 0xf3, 0x21, 0x00, 0x17, 0xa2, 0xd3, 0x0a, 0x63,
                0x4b, 0x65, 0x79, 0x10
            ]
        );
    }
}
