//! Turning CoAP messages and payloads into text for people and JSON for machines: what
//! `covey decode` and the clients print, and what the web console shows.

pub mod cbor_diag;
pub mod hexdump;
pub mod message_json;
pub mod message_text;
pub mod option_value;
pub mod payload;
pub mod terminal;
#[cfg(test)]
mod test_hex;

#[cfg(test)]
mod tests {
    use covey_core::{ContentFormat, Message};

    use super::payload::Payload;
    use super::{message_json, message_text};

    /// A small deterministic generator, so failures reproduce.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn bytes(&mut self, max_len: usize) -> Vec<u8> {
            let len = self.next() as usize % (max_len + 1);
            // Bias towards bytes that start CBOR containers, option headers and markers.
            const INTERESTING: [u8; 12] = [
                0x00, 0x18, 0x5f, 0x7f, 0x81, 0x9f, 0xa1, 0xbf, 0xc1, 0xd1, 0xf9, 0xff,
            ];
            (0..len)
                .map(|_| match self.next() % 3 {
                    0 => INTERESTING[self.next() as usize % INTERESTING.len()],
                    _ => self.next() as u8,
                })
                .collect()
        }
    }

    #[test]
    fn no_datagram_or_payload_makes_rendering_panic() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let mut rendered = 0;
        for _ in 0..20_000 {
            let mut datagram = vec![
                0x40 | (rng.next() % 9) as u8,
                [0x01, 0x45, 0x84][rng.next() as usize % 3],
            ];
            datagram.extend(rng.bytes(40));
            if let Ok(message) = Message::parse(&datagram) {
                if message.validate_options().is_ok() {
                    message_text::render(&message, true);
                    message_json::render(&message);
                    rendered += 1;
                }
            }
        }
        assert!(
            rendered > 100,
            "only {rendered} random datagrams were valid"
        );
        let formats = [
            None,
            Some(0),
            Some(40),
            Some(42),
            Some(50),
            Some(60),
            Some(110),
            Some(112),
            Some(9999),
        ];
        for _ in 0..5_000 {
            let bytes = rng.bytes(24);
            for cf in formats {
                let payload = Payload::new(&bytes, cf.map(ContentFormat));
                payload.summary();
                payload.body_text(true);
                payload.to_json();
            }
        }
    }
}
