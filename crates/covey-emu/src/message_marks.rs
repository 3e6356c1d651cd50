//! Application messages recognised in the packets a link carries: a marker (the start of the
//! scenario's JSON document) followed by the message's decimal sequence number. Counting, per
//! direction, the first copy of each message apart from its repeats tells how much of the
//! traffic was the application's data, whatever protocol carried it (one datagram, a TCP
//! segment holding several, a DDS sample).

use memchr::memmem::Finder;
use serde::Serialize;

/// Digits read after the marker (a `u64` has at most 20).
const MAX_DIGITS: usize = 20;

/// How a message is recognised, and the largest sequence number told apart.
#[derive(Debug, Clone)]
pub struct MessageMarker {
    finder: Finder<'static>,
    max_label: u64,
}

impl MessageMarker {
    /// Messages start with `marker`, followed by their sequence number; numbers up to
    /// `max_label` are told apart (one bit each per direction, so memory stays bounded),
    /// larger ones count as unlabelled.
    pub fn new(marker: &[u8], max_label: u64) -> MessageMarker {
        MessageMarker {
            finder: Finder::new(marker).into_owned(),
            max_label,
        }
    }

    /// The sequence number after each occurrence of the marker in `packet` (`None` where no
    /// digits follow it).
    pub fn labels<'a>(&'a self, packet: &'a [u8]) -> impl Iterator<Item = Option<u64>> + 'a {
        let skip = self.finder.needle().len();
        self.finder.find_iter(packet).map(move |at| {
            let digits = packet[at + skip..]
                .iter()
                .take(MAX_DIGITS)
                .take_while(|b| b.is_ascii_digit());
            let mut value: Option<u64> = None;
            for d in digits {
                let next = value
                    .unwrap_or(0)
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(d - b'0')));
                value = Some(next?);
            }
            value
        })
    }
}

/// Messages seen in one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MessageCounts {
    /// Messages put on the link for the first time.
    pub first: u64,
    /// Copies of messages already put on it (retransmissions, duplicates).
    pub repeats: u64,
    /// Markers without a sequence number told apart (none, or beyond the bound).
    pub unlabelled: u64,
}

impl MessageCounts {
    /// The counts of `self` and `other` together.
    pub fn plus(&self, other: &MessageCounts) -> MessageCounts {
        MessageCounts {
            first: self.first + other.first,
            repeats: self.repeats + other.repeats,
            unlabelled: self.unlabelled + other.unlabelled,
        }
    }
}

/// The messages one direction has carried: their counts and which numbers it has seen.
#[derive(Debug, Clone, Default)]
pub struct MessageTally {
    counts: MessageCounts,
    /// Bit `n` set: message `n` has been on this link.
    seen: Vec<u64>,
}

impl MessageTally {
    /// Counts the messages in `packet`, which entered the link.
    pub fn record(&mut self, marker: &MessageMarker, packet: &[u8]) {
        for label in marker.labels(packet) {
            let Some(n) = label.filter(|n| *n <= marker.max_label) else {
                self.counts.unlabelled += 1;
                continue;
            };
            let (word, bit) = ((n / 64) as usize, 1u64 << (n % 64));
            if self.seen.len() <= word {
                self.seen.resize(word + 1, 0);
            }
            if self.seen[word] & bit == 0 {
                self.seen[word] |= bit;
                self.counts.first += 1;
            } else {
                self.counts.repeats += 1;
            }
        }
    }

    /// The counts so far.
    pub fn counts(&self) -> MessageCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker() -> MessageMarker {
        MessageMarker::new(b"{\"seq\":", 1000)
    }

    #[test]
    fn reads_each_sequence_number_after_the_marker() {
        let m = marker();
        let packet =
            b"hdr{\"seq\":7,\"x\":1}{\"seq\":12}{\"seq\":}{\"seq\":99999999999999999999999";
        let labels: Vec<_> = m.labels(packet).collect();
        assert_eq!(labels, vec![Some(7), Some(12), None, None]);
        assert_eq!(m.labels(b"no marker here").count(), 0);
    }

    #[test]
    fn counts_first_copies_apart_from_repeats_per_tally() {
        let m = marker();
        let mut link = MessageTally::default();
        link.record(&m, b"{\"seq\":1}");
        link.record(&m, b"{\"seq\":2}{\"seq\":1}");
        link.record(&m, b"{\"seq\":1}");
        link.record(&m, b"{\"seq\":5000}");
        link.record(&m, b"{\"seq\":x}");
        assert_eq!(
            link.counts(),
            MessageCounts {
                first: 2,
                repeats: 2,
                unlabelled: 2
            }
        );
        let mut other = MessageTally::default();
        other.record(&m, b"{\"seq\":1}");
        assert_eq!(other.counts().first, 1, "another link sees message 1 anew");
        assert_eq!(link.counts().plus(&other.counts()).first, 3);
    }
}
