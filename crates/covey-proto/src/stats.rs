//! Counters read by tests, the CLI and the lab: what the endpoint sent, received and dropped.

use crate::Duration;

/// Why a datagram or request was dropped or refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DropCause {
    /// Not a parseable CoAP message.
    FormatError,
    /// Larger than `max_message_size`.
    TooLarge,
    /// An ACK or RST that matched nothing.
    Unmatched,
    /// A table (peers, exchanges, incoming, buffers, events) was full.
    Overload,
    /// An error response to a multicast request, suppressed; without the `multicast`
    /// feature, any datagram that came to a group.
    MulticastSuppressed,
    /// A stale or duplicate notification.
    StaleNotification,
    /// The queue of datagrams waiting for `poll_transmit` was full.
    OutboxFull,
    /// A datagram to an unverified address that did not fit its amplification budget.
    AmplificationLimit,
    /// A loopback source address on a datagram that did not come in on the loopback
    /// interface: spoofed.
    SpoofedLoopback,
}

/// Number of [`DropCause`] variants.
pub const DROP_CAUSES: usize = 9;

impl DropCause {
    /// Every cause, in the order of `Stats::drops`.
    pub const ALL: [DropCause; DROP_CAUSES] = [
        DropCause::FormatError,
        DropCause::TooLarge,
        DropCause::Unmatched,
        DropCause::Overload,
        DropCause::MulticastSuppressed,
        DropCause::StaleNotification,
        DropCause::OutboxFull,
        DropCause::AmplificationLimit,
        DropCause::SpoofedLoopback,
    ];
}

/// Retransmission attempts tracked separately (the congestion-control papers count up to the
/// 8th); later attempts share the last bucket.
pub const TRACKED_ATTEMPTS: usize = 10;

/// Endpoint-wide counters.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Datagrams handed to the driver.
    pub transmissions: u64,
    /// Bytes of those datagrams (UDP payloads).
    pub bytes_sent: u64,
    /// Retransmissions; index i counts the (i+1)-th retransmission of a CON.
    pub retransmissions: [u64; TRACKED_ATTEMPTS],
    /// Datagrams received.
    pub received: u64,
    /// Bytes of those datagrams (UDP payloads).
    pub bytes_received: u64,
    /// Requests answered with an Echo value (a 4.01, or a response cut to a block that fits)
    /// because their sender's address was not verified.
    pub echo_challenges: u64,
    /// Requests sent again with the Echo value of a 4.01 response or of a cut first block.
    pub echo_retries: u64,
    /// Duplicate CON/NON messages detected.
    pub duplicates: u64,
    /// Drops by cause (index with `DropCause as usize`).
    pub drops: [u64; DROP_CAUSES],
    /// Exchanges that completed with a response, by the number of retransmissions they
    /// needed (index i: i retransmissions; the last bucket holds the rest).
    pub completed_after: [u64; TRACKED_ATTEMPTS],
    /// Exchanges that failed (timeout, reset, cancel).
    pub failed: u64,
    /// RTT samples taken.
    pub rtt_samples: u64,
    /// Sum of RTT samples, for the mean.
    pub rtt_total: Duration,
    /// Requests failed because no message ID was free for reuse yet.
    pub mid_exhausted: u64,
    /// Empty ACKs sent because the application was slower than the piggyback window.
    pub separate_responses: u64,
    /// OSCORE requests refused (unknown context, replay, failed decryption, malformed):
    /// answered with RFC 8613 §8.2's unprotected error, never seen by the application.
    #[cfg(feature = "oscore")]
    pub oscore_refused: u64,
}

impl Stats {
    /// Adds one drop of `cause`.
    // Called, not inlined, on bare metal: a 64-bit increment at each of the engine's
    // sixteen drop sites cost more flash than the call.
    #[cfg_attr(target_os = "none", inline(never))]
    pub fn drop(&mut self, cause: DropCause) {
        self.drops[cause as usize] += 1;
    }

    /// Drops counted for `cause`.
    pub fn drops_of(&self, cause: DropCause) -> u64 {
        self.drops[cause as usize]
    }

    /// Drops of every cause together.
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }

    /// Total retransmissions.
    pub fn total_retransmissions(&self) -> u64 {
        self.retransmissions.iter().sum()
    }
}
