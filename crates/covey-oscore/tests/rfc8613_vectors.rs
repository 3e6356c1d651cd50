//! RFC 8613 Appendix C: every test vector, with the RFC's bytes copied as printed.

use covey_core::Message;
use covey_oscore::{nonce, ContextInput, PartialIv, RequestId, ResponsePartialIv, SecurityContext};

/// Bytes from the hex the RFC prints (without its "0x").
fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

const MASTER_SECRET: &str = "0102030405060708090a0b0c0d0e0f10";
const MASTER_SALT: &str = "9e7ca92223786340";
const ID_CONTEXT: &str = "37cbf3210017a2d3";

/// A context from the RFC's inputs.
fn context(
    salt: &str,
    sender_id: &str,
    recipient_id: &str,
    id_context: Option<&str>,
) -> SecurityContext {
    let (secret, salt, sender, recipient) = (
        hex(MASTER_SECRET),
        hex(salt),
        hex(sender_id),
        hex(recipient_id),
    );
    let id_context = id_context.map(hex);
    SecurityContext::derive(&ContextInput {
        master_secret: &secret,
        master_salt: &salt,
        sender_id: &sender,
        recipient_id: &recipient,
        id_context: id_context.as_deref(),
    })
    .unwrap()
}

/// Checks the derived keys, Common IV and Partial IV 0 nonces against the RFC's outputs.
fn assert_derived(
    context: &SecurityContext,
    sender_key: &str,
    recipient_key: &str,
    common_iv: &str,
    sender_nonce: &str,
    recipient_nonce: &str,
) {
    assert_eq!(context.sender_key().as_slice(), hex(sender_key));
    assert_eq!(context.recipient_key().as_slice(), hex(recipient_key));
    assert_eq!(context.common_iv().as_slice(), hex(common_iv));
    let zero = PartialIv::from_sequence_number(0).unwrap();
    let iv = context.common_iv();
    assert_eq!(
        nonce(iv, context.sender_id(), &zero).unwrap().as_slice(),
        hex(sender_nonce)
    );
    assert_eq!(
        nonce(iv, context.recipient_id(), &zero).unwrap().as_slice(),
        hex(recipient_nonce)
    );
}

#[test]
fn c_1_1_client_key_derivation_with_master_salt() {
    let client = context(MASTER_SALT, "", "01", None);
    assert_derived(
        &client,
        "f0910ed7295e6ad4b54fc793154302ff",
        "ffb14e093c94c9cac9471648b4f98710",
        "4622d4dd6d944168eefb54987c",
        "4622d4dd6d944168eefb54987c",
        "4722d4dd6d944169eefb54987c",
    );
}

#[test]
fn c_1_2_server_key_derivation_with_master_salt() {
    let server = context(MASTER_SALT, "01", "", None);
    assert_derived(
        &server,
        "ffb14e093c94c9cac9471648b4f98710",
        "f0910ed7295e6ad4b54fc793154302ff",
        "4622d4dd6d944168eefb54987c",
        "4722d4dd6d944169eefb54987c",
        "4622d4dd6d944168eefb54987c",
    );
}

#[test]
fn c_2_key_derivation_without_master_salt() {
    let client = context("", "00", "01", None);
    assert_derived(
        &client,
        "321b26943253c7ffb6003b0b64d74041",
        "e57b5635815177cd679ab4bcec9d7dda",
        "be35ae297d2dace910c52e99f9",
        "bf35ae297d2dace910c52e99f9",
        "bf35ae297d2dace810c52e99f9",
    );
    let server = context("", "01", "00", None);
    assert_derived(
        &server,
        "e57b5635815177cd679ab4bcec9d7dda",
        "321b26943253c7ffb6003b0b64d74041",
        "be35ae297d2dace910c52e99f9",
        "bf35ae297d2dace810c52e99f9",
        "bf35ae297d2dace910c52e99f9",
    );
}

#[test]
fn c_3_key_derivation_with_id_context() {
    let client = context(MASTER_SALT, "", "01", Some(ID_CONTEXT));
    assert_derived(
        &client,
        "af2a1300a5e95788b356336eeecd2b92",
        "e39a0c7c77b43f03b4b39ab9a268699f",
        "2ca58fb85ff1b81c0b7181b85e",
        "2ca58fb85ff1b81c0b7181b85e",
        "2da58fb85ff1b81d0b7181b85e",
    );
    let server = context(MASTER_SALT, "01", "", Some(ID_CONTEXT));
    assert_derived(
        &server,
        "e39a0c7c77b43f03b4b39ab9a268699f",
        "af2a1300a5e95788b356336eeecd2b92",
        "2ca58fb85ff1b81c0b7181b85e",
        "2da58fb85ff1b81d0b7181b85e",
        "2ca58fb85ff1b81c0b7181b85e",
    );
}

/// Protects `unprotected` with the client at sequence number 20 and expects `protected`;
/// the server then recovers `unprotected` from it. Returns the server and the request's id.
fn assert_request_vector(
    mut client: SecurityContext,
    mut server: SecurityContext,
    unprotected: &str,
    protected: &str,
) -> (SecurityContext, RequestId) {
    let (unprotected, protected) = (hex(unprotected), hex(protected));
    client.set_sender_sequence_number(20).unwrap();
    let mut out = [0; 256];
    let (len, request_id) = client
        .protect_request(&Message::parse(&unprotected).unwrap(), &mut out)
        .unwrap();
    assert_eq!(&out[..len], protected.as_slice());
    assert_eq!(request_id.partial_iv.as_bytes(), [0x14]);
    assert_eq!(client.sender_sequence_number(), 21);

    let (len, server_request_id) = server
        .unprotect_request(&Message::parse(&protected).unwrap(), &mut out)
        .unwrap();
    assert_eq!(&out[..len], unprotected.as_slice());
    assert_eq!(server_request_id, request_id);
    (server, request_id)
}

#[test]
fn c_4_request_with_the_c_1_context() {
    assert_request_vector(
        context(MASTER_SALT, "", "01", None),
        context(MASTER_SALT, "01", "", None),
        "44015d1f00003974396c6f63616c686f737483747631",
        "44025d1f00003974396c6f6 3616c686f7374620914ff612f1092f1776f1c1668b3825e",
    );
}

#[test]
fn c_5_request_with_the_c_2_context() {
    assert_request_vector(
        context("", "00", "01", None),
        context("", "01", "00", None),
        "440171c30000b932396c6f63616c686f737483747631",
        "440271c30000b932396c6f6 3616c686f737463091400ff4ed339a5a379b0b8bc731fffb0",
    );
}

#[test]
fn c_6_request_with_the_c_3_context_and_kid_context() {
    assert_request_vector(
        context(MASTER_SALT, "", "01", Some(ID_CONTEXT)),
        context(MASTER_SALT, "01", "", Some(ID_CONTEXT)),
        "44012f8eef9bbf7a396c6f63616c686f737483747631",
        "44022f8eef9bbf7a396c6f63616c686f73746b19140837cbf3210017a2d3ff
         72cd7273fd331ac45cffbe55c3",
    );
}

const C4_UNPROTECTED: &str = "44015d1f00003974396c6f63616c686f737483747631";
const C4_PROTECTED: &str = "44025d1f00003974396c6f63616c686f7374620914ff612f1092f1776f1c1668b3825e";
const C7_C8_UNPROTECTED_RESPONSE: &str = "64455d1f00003974ff48656c6c6f20576f726c6421";

/// Protects the C.7/C.8 response to the C.4 request and expects `protected`; the client then
/// recovers the unprotected response.
fn assert_response_vector(partial_iv: ResponsePartialIv, protected: &str) {
    let (_, request_id) = assert_request_vector(
        context(MASTER_SALT, "", "01", None),
        context(MASTER_SALT, "01", "", None),
        C4_UNPROTECTED,
        C4_PROTECTED,
    );
    // Server Sender Sequence Number 0, as the vectors state.
    let mut server = context(MASTER_SALT, "01", "", None);
    let unprotected = hex(C7_C8_UNPROTECTED_RESPONSE);
    let protected = hex(protected);
    let mut out = [0; 256];
    let len = server
        .protect_response(
            &Message::parse(&unprotected).unwrap(),
            &request_id,
            partial_iv,
            &mut out,
        )
        .unwrap();
    assert_eq!(&out[..len], protected.as_slice());

    let client = context(MASTER_SALT, "", "01", None);
    let len = client
        .unprotect_response(&Message::parse(&protected).unwrap(), &request_id, &mut out)
        .unwrap();
    assert_eq!(&out[..len], unprotected.as_slice());
}

#[test]
fn c_7_response_without_partial_iv() {
    assert_response_vector(
        ResponsePartialIv::FromRequest,
        "64445d1f0000397490ffdbaad1e9a7e7b2a813d3c31524378303cdafae119106",
    );
}

#[test]
fn c_8_response_with_partial_iv() {
    assert_response_vector(
        ResponsePartialIv::Own,
        "64445d1f00003974920100 ff4d4c13669384b67354b2b6175ff4b8658c666a6cf88e",
    );
}
