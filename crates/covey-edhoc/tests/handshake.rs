//! A full EDHOC handshake between Initiator and Responder, and refusals of untrusted peers.

use covey_edhoc::transport::{parse_request, EdhocRequest};
use covey_edhoc::{EdhocError, Initiator, OwnIdentity, Responder, TrustedPeers};
use covey_oscore::{ContextInput, SecurityContext};

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

// RFC 9529 §3 (method 3, suite 2) CRED_I (kid 0x2b), and lakers' test CRED_R (kid 0x0a:
// RFC 9529's Responder key in a CCS without subject).
const CRED_I: &str = "a2027734322d35302d33312d46462d45462d33372d33322d333908a101a5010202412b2001215820ac75e9ece3e50bfc8ed60399889522405c47bf16df96660a41298cb4307f7eb62258206e5de611388a4b8a8211334ac7d37ecb52a387d257e6db3c2a93df21ff3affc8";
const I: &str = "fb13adeb6518cee5f88417660841142e830a81fe334380a953406a1305e8706b";
const CRED_R: &str = "a2026008a101a5010202410a2001215820bbc34960526ea4d32e940cad2a234148ddc21791a12afbcbac93622046dd44f02258204519e257236b2a0ce2023f0931f1f386ca7afda64fcde0108c224c51eabf6072";
const R: &str = "72cc4761dbd4c78f758931aa589d348d1ef874a7e303ede2f140dcf3e6aa4aac";
// Same key as CRED_R under a different kid (0x0b): a credential nobody trusts.
const CRED_OTHER: &str = "a2026008a101a5010202410b2001215820bbc34960526ea4d32e940cad2a234148ddc21791a12afbcbac93622046dd44f02258204519e257236b2a0ce2023f0931f1f386ca7afda64fcde0108c224c51eabf6072";

fn identity(ccs: &str, key: &str) -> OwnIdentity {
    OwnIdentity::new(&unhex(ccs), &unhex(key)).unwrap()
}

fn trusting(ccs: &str) -> TrustedPeers {
    TrustedPeers::new([unhex(ccs).as_slice()]).unwrap()
}

/// Runs message_1 and message_2, returning the responder's and initiator's outcomes.
fn message_1_payload(initiator: &OwnIdentity) -> (covey_edhoc::InitiatorAwaitingMessage2, Vec<u8>) {
    Initiator::start(initiator).unwrap()
}

#[test]
fn handshake_gives_both_sides_one_oscore_context() {
    let (own_i, own_r) = (identity(CRED_I, I), identity(CRED_R, R));
    let (initiator, payload_1) = message_1_payload(&own_i);
    let EdhocRequest::Message1(message_1) = parse_request(&payload_1).unwrap() else {
        panic!("message_1 not framed after CBOR true");
    };
    let (responder, message_2) = Responder::respond(&own_r, message_1, |_| Some(0)).unwrap();
    let (payload_3, awaiting) = initiator
        .receive_message_2(&message_2, &trusting(CRED_R))
        .unwrap();
    let EdhocRequest::Message3 { c_r, message_3 } = parse_request(&payload_3).unwrap() else {
        panic!("message_3 not framed after C_R");
    };
    assert_eq!(c_r, responder.c_r());
    let (at_responder, message_4) = responder
        .receive_message_3(message_3, &trusting(CRED_I))
        .unwrap();
    assert!(!message_4.is_empty(), "message_4 confirms the key");
    let at_initiator = awaiting.receive_message_4(&message_4).unwrap();

    assert_eq!(at_initiator.master_secret, at_responder.master_secret);
    assert_eq!(at_initiator.master_salt, at_responder.master_salt);
    assert_eq!(at_initiator.sender_id, at_responder.recipient_id);
    assert_eq!(at_initiator.recipient_id, at_responder.sender_id);
    assert_ne!(at_initiator.sender_id, at_initiator.recipient_id);
    assert_eq!(at_initiator.peer_kid, "0a");
    assert_eq!(at_responder.peer_kid, "2b");
    let client = at_initiator.security_context().unwrap();
    let server = at_responder.security_context().unwrap();
    assert_eq!(client.sender_key(), server.recipient_key());
    assert_eq!(client.recipient_key(), server.sender_key());
    assert_eq!(client.common_iv(), server.common_iv());
}

/// message_4 confirms the key to the Initiator (RFC 9528 §5.5): a tampered one fails it.
#[test]
fn a_tampered_message_4_is_refused() {
    let (own_i, own_r) = (identity(CRED_I, I), identity(CRED_R, R));
    let (initiator, payload_1) = message_1_payload(&own_i);
    let (responder, message_2) = Responder::respond(&own_r, &payload_1[1..], |_| Some(0)).unwrap();
    let (payload_3, awaiting) = initiator
        .receive_message_2(&message_2, &trusting(CRED_R))
        .unwrap();
    let EdhocRequest::Message3 { message_3, .. } = parse_request(&payload_3).unwrap() else {
        panic!("message_3 not framed after C_R");
    };
    assert_eq!(awaiting.message_3(), message_3);
    let (_, mut message_4) = responder
        .receive_message_3(message_3, &trusting(CRED_I))
        .unwrap();
    let last = message_4.len() - 1;
    message_4[last] ^= 1;
    let error = awaiting.receive_message_4(&message_4).unwrap_err();
    assert!(
        matches!(
            &error,
            EdhocError::Protocol {
                step: "message_4",
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn two_handshakes_give_different_secrets() {
    let (own_i, own_r) = (identity(CRED_I, I), identity(CRED_R, R));
    let mut secrets = Vec::new();
    for _ in 0..2 {
        let (initiator, payload_1) = message_1_payload(&own_i);
        let (_, message_2) = Responder::respond(&own_r, &payload_1[1..], |_| Some(0)).unwrap();
        let (_, awaiting) = initiator
            .receive_message_2(&message_2, &trusting(CRED_R))
            .unwrap();
        let established = awaiting.complete_without_message_4().unwrap();
        secrets.push(established.master_secret);
    }
    assert_ne!(
        secrets[0], secrets[1],
        "ephemeral keys must differ per session"
    );
}

#[test]
fn initiator_refuses_an_untrusted_responder() {
    let (own_i, own_r) = (identity(CRED_I, I), identity(CRED_OTHER, R));
    let (initiator, payload_1) = message_1_payload(&own_i);
    let (_, message_2) = Responder::respond(&own_r, &payload_1[1..], |_| Some(0)).unwrap();
    let error = initiator
        .receive_message_2(&message_2, &trusting(CRED_R))
        .unwrap_err();
    assert_eq!(error, EdhocError::UntrustedPeer { kid: "0b".into() });
    assert_eq!(
        error.to_string(),
        "EDHOC peer credential kid 0b is not trusted"
    );
}

#[test]
fn responder_refuses_an_untrusted_initiator() {
    let (own_i, own_r) = (identity(CRED_I, I), identity(CRED_R, R));
    let (initiator, payload_1) = message_1_payload(&own_i);
    let (responder, message_2) = Responder::respond(&own_r, &payload_1[1..], |_| Some(0)).unwrap();
    let (payload_3, _) = initiator
        .receive_message_2(&message_2, &trusting(CRED_R))
        .unwrap();
    let error = responder
        .receive_message_3(&payload_3[1..], &trusting(CRED_OTHER))
        .unwrap_err();
    assert_eq!(error, EdhocError::UntrustedPeer { kid: "2b".into() });
}

#[test]
fn a_wrong_private_key_fails_verification() {
    // The Responder claims CRED_R but signs with I's key: message_2's MAC cannot verify.
    let (own_i, impostor) = (identity(CRED_I, I), identity(CRED_R, I));
    let (initiator, payload_1) = message_1_payload(&own_i);
    let (_, message_2) = Responder::respond(&impostor, &payload_1[1..], |_| Some(0)).unwrap();
    let error = initiator
        .receive_message_2(&message_2, &trusting(CRED_R))
        .unwrap_err();
    assert!(
        matches!(&error, EdhocError::Protocol { step: "message_2", reason } if reason == "MacVerificationFailed"),
        "{error:?}"
    );
}

#[test]
fn responder_avoids_taken_and_initiator_connection_identifiers() {
    let (own_i, own_r) = (identity(CRED_I, I), identity(CRED_R, R));
    let (initiator, payload_1) = message_1_payload(&own_i);
    // C_I is random: pick a free identifier that is not it.
    let free = if initiator.c_i() == [0x05] {
        0x06
    } else {
        0x05
    };
    let (responder, _) =
        Responder::respond(&own_r, &payload_1[1..], |id| (id == [free]).then_some(0)).unwrap();
    assert_eq!(responder.c_r(), [free]);
    // The only identifier the table leaves free is the Initiator's own C_I: refused.
    let c_i = initiator.c_i().to_vec();
    let error =
        Responder::respond(&own_r, &payload_1[1..], |id| (id == c_i).then_some(0)).unwrap_err();
    assert_eq!(error, EdhocError::NoFreeConnectionId);
    let error = Responder::respond(&own_r, &payload_1[1..], |_| None).unwrap_err();
    assert!(error
        .to_string()
        .contains("no EDHOC connection identifier is free"));
}

/// With none free, the identifier of lowest rank is taken over, unless it is C_I (which C_R
/// must differ from, RFC 9528 §3.3.2): then the next lowest.
#[test]
fn responder_takes_over_the_lowest_ranked_identifier_other_than_c_i() {
    let (own_i, own_r) = (identity(CRED_I, I), identity(CRED_R, R));
    let (initiator, payload_1) = message_1_payload(&own_i);
    // The one-byte identifiers 0x00..=0x17 rank by value, the rest after them.
    let rank = |id: &[u8]| Some(1 + u64::from(id[0]));
    let (responder, _) = Responder::respond(&own_r, &payload_1[1..], rank).unwrap();
    let lowest = if initiator.c_i() == [0x00] {
        0x01
    } else {
        0x00
    };
    assert_eq!(responder.c_r(), [lowest]);
}

#[test]
fn garbage_is_refused_without_panic() {
    let own_r = identity(CRED_R, R);
    for garbage in [&[][..], &[0x03], &[0xff; 40], &[0x03, 0x02, 0x58, 0x20]] {
        assert!(Responder::respond(&own_r, garbage, |_| Some(0)).is_err());
    }
    assert!(parse_request(&[]).is_err());
    assert!(parse_request(&[0xa0, 1]).is_err());
    assert!(parse_request(&[0x45, 1]).is_err());
}

#[test]
fn exported_context_matches_a_derivation_from_the_secrets() {
    let (own_i, own_r) = (identity(CRED_I, I), identity(CRED_R, R));
    let (initiator, payload_1) = message_1_payload(&own_i);
    let (_, message_2) = Responder::respond(&own_r, &payload_1[1..], |_| Some(0)).unwrap();
    let (_, awaiting) = initiator
        .receive_message_2(&message_2, &trusting(CRED_R))
        .unwrap();
    let established = awaiting.complete_without_message_4().unwrap();
    let by_hand = SecurityContext::derive(&ContextInput {
        master_secret: &established.master_secret,
        master_salt: &established.master_salt,
        sender_id: &established.sender_id,
        recipient_id: &established.recipient_id,
        id_context: None,
    })
    .unwrap();
    assert_eq!(
        by_hand.sender_key(),
        established.security_context().unwrap().sender_key()
    );
}
