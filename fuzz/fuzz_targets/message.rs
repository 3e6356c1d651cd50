//! Parses arbitrary bytes as a CoAP message. The wire encoding is canonical, so anything that
//! parses must re-encode to exactly the input bytes, and into no smaller buffer.
#![no_main]

use covey_core::{EncodeError, Header, Message, MessageEncoder};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match Message::parse(data) {
        Err(e) => assert!(
            e.offset <= data.len(),
            "error offset beyond the input: {e:?}"
        ),
        Ok(m) => {
            assert_eq!(Header::parse(data).ok(), Some(m.header()));
            if let Err(e) = m.validate_options() {
                assert!(
                    e.offset <= data.len(),
                    "error offset beyond the input: {e:?}"
                );
            }
            let mut previous = 0;
            for o in m.options() {
                assert!(o.number.0 >= previous, "options out of order");
                previous = o.number.0;
                let _ = (o.value_uint(), o.value_str());
            }
            let _ = (
                m.block1(),
                m.block2(),
                m.observe(),
                m.content_format(),
                m.accept(),
            );
            let _ = (m.uri_path().count(), m.uri_query().count(), m.token());

            let mut buf = vec![0u8; data.len()];
            let n = MessageEncoder::encode_message(&m, &mut buf)
                .expect("a parsed message re-encodes into a buffer of its own size");
            assert_eq!(&buf[..n], data, "re-encoding differs from the input");
            let shorter = &mut buf[..data.len() - 1];
            assert_eq!(
                MessageEncoder::encode_message(&m, shorter),
                Err(EncodeError::BufferTooSmall)
            );
        }
    }
});
