//! Feeds arbitrary input to OSCORE's receiving side (covey-oscore), as `covey serve --oscore`
//! meets it: the OSCORE option alone, a whole protected request, and a request a real client
//! protected with one byte flipped. Nothing panics; an option that parses encodes back to
//! itself; a forged or replayed request is refused and leaves the replay window as it was.
#![no_main]

use covey_core::Message;
use covey_oscore::{ContextInput, OscoreError, OscoreOption, SecurityContext};
use libfuzzer_sys::fuzz_target;

fn context(sender_id: &[u8], recipient_id: &[u8]) -> SecurityContext {
    SecurityContext::derive(&ContextInput {
        master_secret: &[7; 16],
        master_salt: &[0x9e, 0x7c],
        sender_id,
        recipient_id,
        id_context: None,
    })
    .expect("a valid context")
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut server = context(&[0x01], &[]);
    // Room for an inner message and, after it, the plaintext it is decrypted from.
    let mut out = vec![0; 2 * rest.len() + 128];
    match mode % 3 {
        0 => {
            if let Ok(option) = OscoreOption::parse(rest) {
                let encoded = option.encode().expect("a parsed option encodes");
                assert_eq!(OscoreOption::parse(&encoded), Ok(option));
            }
        }
        1 => {
            if let Ok(message) = Message::parse(rest) {
                // Without the key nothing verifies, whatever the input.
                assert!(server.unprotect_request(&message, &mut out).is_err());
            }
        }
        _ => {
            // `rest` as a plain request, protected by a client that holds the key.
            let Ok(plain) = Message::parse(rest) else {
                return;
            };
            let mut client = context(&[], &[0x01]);
            let mut protected = vec![0; rest.len() + 64];
            let Ok((len, _)) = client.protect_request(&plain, &mut protected) else {
                return;
            };
            protected.truncate(len);
            let good = Message::parse(&protected).expect("protect writes a message");
            let (inner, _) = server
                .unprotect_request(&good, &mut out)
                .expect("the server verifies what the client protected");
            let inner = Message::parse(&out[..inner]).expect("an inner request parses");
            assert_eq!(inner.code(), plain.code());
            assert_eq!(inner.payload(), plain.payload());
            assert_eq!(
                server.unprotect_request(&good, &mut out).err(),
                Some(OscoreError::Replay)
            );
            // One flipped byte of the ciphertext: refused, whichever byte it is.
            let at = len - 1 - (mode as usize % good.payload().len().max(1));
            protected[at] ^= 0x01;
            if let Ok(forged) = Message::parse(&protected) {
                let mut fresh = context(&[0x01], &[]);
                let refused = fresh.unprotect_request(&forged, &mut out).err();
                assert_eq!(refused, Some(OscoreError::DecryptionFailed));
            }
        }
    }
});
