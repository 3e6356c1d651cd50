//! Feeds an arbitrary byte stream to the SLIP decoder of the mote and of `covey tunslip`:
//! every frame it yields fits its buffer, and encoding that frame and decoding it again
//! gives the same frame.
#![no_main]

use covey_slip::{encode, encoded_len, Decoded, Decoder};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|line: &[u8]| {
    let mut decoder = Decoder::<256>::new();
    for &byte in line {
        if let Decoded::Frame(len) = decoder.push(byte) {
            let frame = decoder.frame().to_vec();
            assert!(len == frame.len() && (1..=256).contains(&len));
            let mut again = Vec::new();
            encode(&frame, |b| again.push(b));
            assert_eq!(again.len(), encoded_len(&frame));
            let mut check = Decoder::<256>::new();
            let decoded: Vec<Vec<u8>> = again
                .iter()
                .filter_map(|&b| match check.push(b) {
                    Decoded::Frame(_) => Some(check.frame().to_vec()),
                    _ => None,
                })
                .collect();
            assert_eq!(decoded, [frame]);
        }
    }
});
