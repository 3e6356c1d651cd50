//! SLIP, the framing of RFC 1055 for IP packets on a serial line, as Contiki's `tunslip6` and
//! its motes speak it: each frame ends with END (0xC0); END and ESC (0xDB) inside a frame are
//! sent as ESC ESC_END and ESC ESC_ESC. Frames that begin with `?` or `!` are Contiki's
//! configuration requests and answers (`?P` asks the host for the IPv6 prefix, `!P` carries
//! it), not IP packets.
//!
//! The [`Decoder`] holds at most one frame of a size fixed when it is made, so a line that
//! never ends a frame costs no more memory than a full one; the [`encode`] side writes bytes
//! through a callback, so a UART driver and a host buffer both use it.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// Ends a frame (and, sent first, flushes line noise before one).
pub const END: u8 = 0xC0;
/// Starts an escape sequence.
pub const ESC: u8 = 0xDB;
/// After ESC: a data byte END.
pub const ESC_END: u8 = 0xDC;
/// After ESC: a data byte ESC.
pub const ESC_ESC: u8 = 0xDD;

/// Writes `frame` as SLIP through `put`: END first (RFC 1055 recommends it, so noise on the
/// line before the frame ends as a frame of its own), the escaped bytes, then END.
pub fn encode(frame: &[u8], mut put: impl FnMut(u8)) {
    put(END);
    for &byte in frame {
        match byte {
            END => {
                put(ESC);
                put(ESC_END);
            }
            ESC => {
                put(ESC);
                put(ESC_ESC);
            }
            other => put(other),
        }
    }
    put(END);
}

/// The number of bytes [`encode`] writes for `frame`.
pub fn encoded_len(frame: &[u8]) -> usize {
    2 + frame.len() + frame.iter().filter(|&&b| b == END || b == ESC).count()
}

/// What one byte fed to a [`Decoder`] completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded {
    /// Nothing yet: the frame goes on (or an empty frame ended, as between two ENDs).
    Pending,
    /// A frame of this many bytes ended; read it with [`Decoder::frame`] before the next byte.
    Frame(usize),
    /// A frame ended that was longer than the decoder holds, or had an ESC followed by a
    /// byte RFC 1055 does not define; it is dropped.
    Dropped,
}

/// Reassembles frames from a byte stream into a buffer of `N` bytes.
#[derive(Debug, Clone)]
pub struct Decoder<const N: usize> {
    buf: [u8; N],
    len: usize,
    escaped: bool,
    /// The frame in progress is dropped at its END (too long or badly escaped).
    spoiled: bool,
    /// The length of the frame that ended last, readable until the next byte.
    ready: usize,
}

impl<const N: usize> Default for Decoder<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Decoder<N> {
    /// A decoder between frames.
    pub const fn new() -> Self {
        Decoder {
            buf: [0; N],
            len: 0,
            escaped: false,
            spoiled: false,
            ready: 0,
        }
    }

    /// Feeds one byte from the line.
    pub fn push(&mut self, byte: u8) -> Decoded {
        self.ready = 0;
        if byte == END {
            let (len, spoiled) = (self.len, self.spoiled || self.escaped);
            self.len = 0;
            self.escaped = false;
            self.spoiled = false;
            return match (spoiled, len) {
                (true, _) => Decoded::Dropped,
                (false, 0) => Decoded::Pending,
                (false, len) => {
                    self.ready = len;
                    Decoded::Frame(len)
                }
            };
        }
        let data = if self.escaped {
            self.escaped = false;
            match byte {
                ESC_END => END,
                ESC_ESC => ESC,
                _ => {
                    self.spoiled = true;
                    return Decoded::Pending;
                }
            }
        } else if byte == ESC {
            self.escaped = true;
            return Decoded::Pending;
        } else {
            byte
        };
        match self.buf.get_mut(self.len) {
            Some(slot) if !self.spoiled => {
                *slot = data;
                self.len += 1;
            }
            _ => self.spoiled = true,
        }
        Decoded::Pending
    }

    /// The frame the last byte completed (empty when it completed none).
    pub fn frame(&self) -> &[u8] {
        &self.buf[..self.ready]
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    fn frames_of<const N: usize>(line: &[u8]) -> (Vec<Vec<u8>>, usize) {
        let mut decoder = Decoder::<N>::new();
        let (mut frames, mut dropped) = (Vec::new(), 0);
        for &b in line {
            match decoder.push(b) {
                Decoded::Frame(_) => frames.push(decoder.frame().to_vec()),
                Decoded::Dropped => dropped += 1,
                Decoded::Pending => {}
            }
        }
        (frames, dropped)
    }

    #[test]
    fn end_and_esc_inside_a_frame_are_escaped_as_rfc_1055_says() {
        let mut line = Vec::new();
        encode(&[1, END, 2, ESC, 3], |b| line.push(b));
        assert_eq!(line, [END, 1, ESC, ESC_END, 2, ESC, ESC_ESC, 3, END]);
        assert_eq!(encoded_len(&[1, END, 2, ESC, 3]), line.len());
    }

    #[test]
    fn a_frame_longer_than_the_buffer_is_dropped_and_the_next_one_decodes() {
        let mut line = Vec::new();
        encode(&[7; 9], |b| line.push(b));
        encode(&[8; 8], |b| line.push(b));
        let (frames, dropped) = frames_of::<8>(&line);
        assert_eq!((frames, dropped), (std::vec![std::vec![8; 8]], 1));
    }

    #[test]
    fn an_undefined_escape_drops_its_frame() {
        let (frames, dropped) = frames_of::<8>(&[END, 1, ESC, 0x42, 2, END, 3, END]);
        assert_eq!((frames, dropped), (std::vec![std::vec![3]], 1));
    }

    proptest! {
        #[test]
        fn frames_come_back_as_they_were_sent(
            frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..64), 0..8)
        ) {
            let mut line = Vec::new();
            for f in &frames {
                encode(f, |b| line.push(b));
            }
            prop_assert_eq!(frames_of::<64>(&line), (frames, 0));
        }

        #[test]
        fn any_line_noise_is_bounded_and_never_panics(line in proptest::collection::vec(any::<u8>(), 0..512)) {
            let (frames, _) = frames_of::<32>(&line);
            prop_assert!(frames.iter().all(|f| !f.is_empty() && f.len() <= 32));
        }
    }
}
