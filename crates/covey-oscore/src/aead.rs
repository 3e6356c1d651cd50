//! AES-CCM-16-64-128 (COSE algorithm 10): 128-bit key, 64-bit tag, 13-byte nonce.

use crate::{KEY_LEN, NONCE_LEN, TAG_LEN};
use aes::Aes128;
use alloc::vec::Vec;
use ccm::aead::array::Array;
use ccm::consts::{U13, U8};
use ccm::{AeadInOut, Ccm, KeyInit};

type AesCcm16_64_128 = Ccm<Aes128, U8, U13>;

/// Encrypts `plaintext` in place and appends the tag, giving the COSE ciphertext.
pub(crate) fn seal(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    plaintext: &mut Vec<u8>,
) -> Result<(), ()> {
    let cipher = AesCcm16_64_128::new(&Array::from(*key));
    let tag = cipher
        .encrypt_inout_detached(&Array::from(*nonce), aad, plaintext.as_mut_slice().into())
        .map_err(|_| ())?;
    plaintext.extend_from_slice(&tag);
    Ok(())
}

/// Verifies and decrypts a COSE ciphertext (ciphertext then tag) into its plaintext.
pub(crate) fn open(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    ciphertext: &[u8],
) -> Result<Vec<u8>, ()> {
    let body_len = ciphertext.len().checked_sub(TAG_LEN).ok_or(())?;
    let (body, tag) = ciphertext.split_at(body_len);
    let tag: [u8; TAG_LEN] = tag.try_into().map_err(|_| ())?;
    let mut plaintext = body.to_vec();
    let cipher = AesCcm16_64_128::new(&Array::from(*key));
    cipher
        .decrypt_inout_detached(
            &Array::from(*nonce),
            aad,
            plaintext.as_mut_slice().into(),
            &Array::from(tag),
        )
        .map_err(|_| ())?;
    Ok(plaintext)
}
