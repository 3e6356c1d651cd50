//! The CC2520's receive FIFO as Contiki's driver uses it (`dev/cc2520/cc2520.c`; TI CC2520
//! datasheet SWRS068, §20.3.5 and §20.4):
//!
//! - The radio stores each received frame (length byte + MPDU, the FCS replaced by RSSI and
//!   CRC status) in a 128-byte FIFO and, with `CC2520_CONF_AUTOACK` 1 (wismote's
//!   `contiki-conf.h`), ACKs it in hardware as soon as its FCS checks out, before the CPU has
//!   read it.
//! - The CPU reads one frame per poll of `cc2520_process`, which runs only when the CPU returns
//!   to Contiki's scheduler: not while the border router writes a packet up its serial line
//!   (busy-waiting on the UART) or while nullrdc busy-waits on its own transmission.
//! - A frame that does not fit overflows the FIFO: reception halts, so that frame is never
//!   ACKed, and nor is any frame after it until the FIFO is flushed. `cc2520_read()` reads the
//!   first stored frame, sees FIFOP = 1 with FIFO = 0 and strobes `SFLUSHRX`, discarding the
//!   frames behind it, which the hardware had already ACKed: their senders count them as
//!   delivered and only an end-to-end retransmission repairs them.

use std::collections::VecDeque;

/// `RXFIFO` size of the CC2520 (SWRS068 §20.4: 128 bytes).
pub const CC2520_RX_FIFO_BYTES: usize = 128;

/// Why a frame was not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxRefusal {
    /// It did not fit: the FIFO overflowed now.
    Overflow,
    /// The FIFO had overflowed earlier and reception is halted until the CPU flushes it.
    Halted,
}

/// What the CPU gets from one read: the frame it read and the frames a flush discarded.
#[derive(Debug, PartialEq, Eq)]
pub struct RxRead<T> {
    /// The frame read.
    pub frame: T,
    /// Frames behind it that `SFLUSHRX` discarded (only after an overflow).
    pub flushed: Vec<T>,
}

/// The FIFO's bytes and frames.
#[derive(Debug, Clone)]
pub struct RxFifo<T> {
    capacity: usize,
    used: usize,
    frames: VecDeque<(usize, T)>,
    overflowed: bool,
    /// Frames that overflowed the FIFO or arrived while it was halted.
    pub refused: u64,
    /// Stored (ACKed) frames a flush discarded.
    pub flushed: u64,
}

impl<T> RxFifo<T> {
    /// An empty FIFO of `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        RxFifo {
            capacity,
            used: 0,
            frames: VecDeque::new(),
            overflowed: false,
            refused: 0,
            flushed: 0,
        }
    }

    /// Whether nothing waits to be read.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// A frame of `mpdu_bytes` finished arriving: stored (and ACKed) or refused.
    pub fn offer(&mut self, mpdu_bytes: usize, frame: T) -> Result<(), RxRefusal> {
        if self.overflowed {
            self.refused += 1;
            return Err(RxRefusal::Halted);
        }
        let bytes = mpdu_bytes + 1;
        if self.used + bytes > self.capacity {
            self.overflowed = true;
            self.refused += 1;
            return Err(RxRefusal::Overflow);
        }
        self.used += bytes;
        self.frames.push_back((bytes, frame));
        Ok(())
    }

    /// `cc2520_read()`: the head frame and, after an overflow, the flush of everything else.
    pub fn read(&mut self) -> Option<RxRead<T>> {
        let (bytes, frame) = self.frames.pop_front()?;
        self.used -= bytes;
        let flushed = if self.overflowed {
            self.overflowed = false;
            self.used = 0;
            let rest: Vec<T> = self.frames.drain(..).map(|(_, f)| f).collect();
            self.flushed += rest.len() as u64;
            rest
        } else {
            Vec::new()
        };
        Some(RxRead { frame, flushed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_that_fit_wait_in_order() {
        let mut fifo = RxFifo::new(CC2520_RX_FIFO_BYTES);
        assert_eq!(fifo.offer(60, 'a'), Ok(()));
        assert_eq!(fifo.offer(60, 'b'), Ok(()));
        assert_eq!(
            fifo.read(),
            Some(RxRead {
                frame: 'a',
                flushed: vec![]
            })
        );
        assert_eq!(
            fifo.read(),
            Some(RxRead {
                frame: 'b',
                flushed: vec![]
            })
        );
        assert!(fifo.is_empty());
    }

    #[test]
    fn an_overflow_halts_reception_and_the_read_flushes_the_acked_frames_behind_the_first() {
        let mut fifo = RxFifo::new(CC2520_RX_FIFO_BYTES);
        assert_eq!(fifo.offer(50, 'a'), Ok(()));
        assert_eq!(fifo.offer(50, 'b'), Ok(()));
        // 51 + 51 + 51 > 128.
        assert_eq!(fifo.offer(50, 'c'), Err(RxRefusal::Overflow));
        assert_eq!(fifo.offer(5, 'd'), Err(RxRefusal::Halted));
        assert_eq!(
            fifo.read(),
            Some(RxRead {
                frame: 'a',
                flushed: vec!['b']
            })
        );
        assert_eq!((fifo.refused, fifo.flushed), (2, 1));
        assert_eq!(fifo.offer(100, 'e'), Ok(()), "flushed and receiving again");
    }
}
