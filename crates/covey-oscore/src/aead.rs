//! AES-CCM-16-64-128 (COSE algorithm 10): 128-bit key, 64-bit tag, 13-byte nonce.

use crate::{KEY_LEN, NONCE_LEN, TAG_LEN};
use aes::Aes128;
use ccm::aead::array::Array;
use ccm::consts::{U13, U8};
use ccm::{AeadInOut, Ccm, KeyInit};

type AesCcm16_64_128 = Ccm<Aes128, U8, U13>;

/// Encrypts the first `len` bytes of `buf` in place and writes the tag after them, giving
/// the COSE ciphertext; returns its length.
pub(crate) fn seal_in_place(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    buf: &mut [u8],
    len: usize,
) -> Result<usize, ()> {
    if buf.len() < len + TAG_LEN {
        return Err(());
    }
    let (body, rest) = buf.split_at_mut(len);
    let cipher = AesCcm16_64_128::new(&Array::from(*key));
    let tag = cipher
        .encrypt_inout_detached(&Array::from(*nonce), aad, body.into())
        .map_err(|_| ())?;
    rest[..TAG_LEN].copy_from_slice(&tag);
    Ok(len + TAG_LEN)
}

/// Verifies and decrypts a COSE ciphertext (ciphertext then tag) held in `buf`, in place;
/// returns the plaintext's length (at the start of `buf`).
pub(crate) fn open_in_place(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    buf: &mut [u8],
) -> Result<usize, ()> {
    let body_len = buf.len().checked_sub(TAG_LEN).ok_or(())?;
    let (body, tag) = buf.split_at_mut(body_len);
    let tag: [u8; TAG_LEN] = (&*tag).try_into().map_err(|_| ())?;
    let cipher = AesCcm16_64_128::new(&Array::from(*key));
    cipher
        .decrypt_inout_detached(&Array::from(*nonce), aad, body.into(), &Array::from(tag))
        .map_err(|_| ())?;
    Ok(body_len)
}
