//! Properties: any request survives protect then unprotect unchanged, and no byte string
//! given as a protected message makes verification panic.

use covey_core::option_registry::OPTION_REGISTRY;
use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_oscore::{ContextInput, SecurityContext};
use proptest::prelude::*;

fn context(sender_id: &[u8], recipient_id: &[u8]) -> SecurityContext {
    SecurityContext::derive(&ContextInput {
        master_secret: b"a master secret!",
        master_salt: &[],
        sender_id,
        recipient_id,
        id_context: Some(b"ctx"),
    })
    .unwrap()
}

/// One option of the registry with a value within its registered lengths (capped at 20).
fn option() -> impl Strategy<Value = (OptionNumber, Vec<u8>)> {
    // Proxy-Uri must be split before protection and OSCORE marks a protected message.
    let protectable: Vec<_> = OPTION_REGISTRY
        .iter()
        .filter(|d| d.number != OptionNumber::PROXY_URI && d.number != OptionNumber::OSCORE)
        .collect();
    prop::sample::select(protectable).prop_flat_map(|definition| {
        let max = definition.max_len.min(20) as usize;
        let len = definition.min_len as usize..=max;
        prop::collection::vec(any::<u8>(), len).prop_map(move |v| (definition.number, v))
    })
}

/// A request: any method code, type, message ID, token, registry options and payload.
fn request() -> impl Strategy<Value = Vec<u8>> {
    (
        1u8..=31,
        0u8..2,
        any::<u16>(),
        prop::collection::vec(any::<u8>(), 0..=8),
        prop::collection::vec(option(), 0..8),
        prop::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(detail, kind, message_id, token, mut options, payload)| {
            options.sort_by_key(|(number, _)| *number);
            let mut buf = vec![0; 512];
            let mut encoder = MessageEncoder::new(
                &mut buf,
                MessageType::from_bits(kind),
                Code::new(0, detail),
                message_id,
                &token,
            )
            .unwrap();
            for (number, value) in &options {
                encoder.option(*number, value).unwrap();
            }
            encoder.payload(&payload).unwrap();
            let len = encoder.finish();
            buf.truncate(len);
            buf
        })
}

proptest! {
    #[test]
    fn protect_then_unprotect_gives_back_the_request(plain in request()) {
        let mut client = context(b"c", b"s");
        let mut server = context(b"s", b"c");
        let mut protected = [0; 1024];
        let (len, client_id) = client
            .protect_request(&Message::parse(&plain).unwrap(), &mut protected)
            .unwrap();
        let mut out = [0; 1024];
        let (out_len, server_id) = server
            .unprotect_request(&Message::parse(&protected[..len]).unwrap(), &mut out)
            .unwrap();
        prop_assert_eq!(&out[..out_len], plain.as_slice());
        prop_assert_eq!(client_id, server_id);
    }

    /// Protecting the same request again under its own Partial IV gives the same bytes
    /// (no new nonce, no new plaintext): what a client sends to ask for the next outer
    /// block of its response. The sender's sequence number does not move.
    #[test]
    fn protecting_a_request_again_gives_the_same_message(plain in request()) {
        let mut client = context(b"c", b"s");
        let message = Message::parse(&plain).unwrap();
        let mut first = [0; 1024];
        let (len, id) = client.protect_request(&message, &mut first).unwrap();
        let next = client.sender_sequence_number();
        let mut again = [0; 1024];
        let again_len = client.protect_request_again(&message, &id, &mut again).unwrap();
        prop_assert_eq!(&first[..len], &again[..again_len]);
        prop_assert_eq!(client.sender_sequence_number(), next);
        let other = context(b"x", b"s");
        prop_assert!(other.protect_request_again(&message, &id, &mut again).is_err());
    }

    #[test]
    fn arbitrary_bytes_never_make_verification_panic(datagram in prop::collection::vec(any::<u8>(), 0..96)) {
        verify_without_panic(&datagram);
    }

    #[test]
    fn a_protected_request_with_any_byte_changed_never_makes_verification_panic(
        plain in request(),
        index in any::<prop::sample::Index>(),
        value in any::<u8>(),
    ) {
        let mut client = context(b"s", b"c");
        let mut protected = [0; 1024];
        let (len, _) = client
            .protect_request(&Message::parse(&plain).unwrap(), &mut protected)
            .unwrap();
        let mut datagram = protected[..len].to_vec();
        datagram[index.index(len)] = value;
        verify_without_panic(&datagram);
    }
}

/// Runs both verifications on whatever parses; only a panic fails.
fn verify_without_panic(datagram: &[u8]) {
    let Ok(message) = Message::parse(datagram) else {
        return;
    };
    let mut server = context(b"c", b"s");
    let mut out = [0; 256];
    let request_id = match server.unprotect_request(&message, &mut out) {
        Ok((_, id)) => id,
        Err(_) => covey_oscore::RequestId {
            kid: covey_oscore::Kid::new(b"s").unwrap(),
            partial_iv: covey_oscore::PartialIv::from_sequence_number(0).unwrap(),
        },
    };
    let _ = server.unprotect_response(&message, &request_id, &mut out);
}
