//! Endpoint configuration: transmission parameters, the congestion-control algorithm and the
//! capacity of every table, so memory is bounded by configuration.

use crate::amplification_limit::AmplificationLimit;
use crate::cc::Algorithm;
use crate::transmission_parameters::TransmissionParameters;
use crate::Duration;

/// Everything an [`crate::Endpoint`] needs to know up front. Defaults follow RFC 7252.
#[derive(Debug, Clone)]
pub struct Config {
    /// ACK_TIMEOUT, ACK_RANDOM_FACTOR, MAX_RETRANSMIT, NSTART, leisure, ...
    pub transmission: TransmissionParameters,
    /// Retransmission-timeout estimator used for every peer.
    pub congestion_control: Algorithm,
    /// Largest datagram sent or accepted (bytes); larger input is dropped, a unicast CON
    /// request after a 4.13 answer.
    pub max_message_size: usize,
    /// Peers with state (MIDs, RTO estimators, queues) at once.
    pub max_peers: usize,
    /// Outgoing requests (client exchanges) at once, queued ones included.
    pub max_exchanges: usize,
    /// Incoming requests the application has not answered yet.
    pub max_incoming: usize,
    /// Deduplication entries (peer, message ID) remembered at once.
    pub max_dedup_entries: usize,
    /// Datagram buffers: outgoing queue, retransmission copies, cached replies, received
    /// messages awaiting the application.
    pub max_buffers: usize,
    /// Bytes of freed datagram buffers kept for reuse (beyond, they are returned to the
    /// allocator): enough for the steady state to allocate nothing.
    pub pool_retain_bytes: usize,
    /// Requests waiting for an NSTART slot, per peer.
    pub max_queued_per_peer: usize,
    /// Events waiting for the application.
    pub max_events: usize,
    /// Application timers at once.
    pub max_app_timers: usize,
    /// How long the server waits for the application before sending an empty ACK and
    /// answering with a separate response.
    pub piggyback_window: Duration,
    /// How long a client waits for a response once its request is acknowledged (separate
    /// response) or after sending a NON request.
    pub response_timeout: Duration,
    /// Minimum time before a message ID is reused towards the same peer. The RFC demands
    /// EXCHANGE_LIFETIME; `None` uses that. A request that finds no ID free fails with
    /// `Failure::MessageIdsExhausted`.
    pub mid_reuse_interval: Option<Duration>,
    /// Length of the tokens this endpoint generates (1–8 bytes).
    pub token_length: usize,
    /// Max-Age (seconds) sent with 5.03 when a table is full.
    pub overload_max_age: u32,
    /// Block size exponent used for block-wise transfers this endpoint starts or slices
    /// (size 2^(szx+4): 6 is 1024 bytes).
    pub block_szx: u8,
    /// Largest response payload sent in one message when the client asked for no block;
    /// larger ones go block-wise. `None`: one block (`block_size()`), as RFC 7959
    /// implementations do; a constrained link may prefer one fragmented datagram.
    pub single_message_payload: Option<usize>,
    /// Largest body assembled or uploaded block-wise (bytes).
    pub max_body_size: usize,
    /// Block1 uploads being reassembled at once (server side).
    pub max_uploads: usize,
    /// Bytes held by all Block1 reassemblies together.
    pub max_reassembly_bytes: usize,
    /// How long a response body sliced into Block2 blocks is kept for the later blocks.
    pub block_cache_lifetime: Duration,
    /// Observers registered at once (server side).
    pub max_observers: usize,
    /// What one peer and one source may hold of each shared table once it is full.
    pub fair_share: FairShare,
    /// Every n-th notification to an observer is sent CON (the others NON).
    pub observe_con_every: u32,
    /// A CON notification is sent at least this often to each observer (RFC 7641: 24 h).
    pub observe_con_interval: Duration,
    /// How long a multicast request collects responses.
    pub multicast_window_override: Option<Duration>,
    /// Leisure for responses to multicast requests; `None` derives it from `group_size`
    /// and `target_rate` when both are set, else DEFAULT_LEISURE.
    pub leisure: Option<Duration>,
    /// Estimated group size G for the leisure lower bound S·G/R.
    pub group_size: Option<u32>,
    /// Target data rate R in bytes/s for the leisure lower bound S·G/R.
    pub target_rate: Option<u32>,
    /// What peers whose address is not verified may be sent (RFC 9175 Echo).
    pub amplification: AmplificationLimit,
}

impl Default for Config {
    fn default() -> Config {
        let transmission = TransmissionParameters::default();
        Config {
            response_timeout: transmission.max_transmit_wait(),
            transmission,
            congestion_control: Algorithm::Default,
            max_message_size: 1280,
            max_peers: 1024,
            max_exchanges: 256,
            max_incoming: 256,
            max_dedup_entries: 8192,
            max_buffers: 1024,
            pool_retain_bytes: 256 << 10,
            max_queued_per_peer: 64,
            max_events: 1024,
            max_app_timers: 64,
            piggyback_window: Duration::from_millis(1000),
            mid_reuse_interval: None,
            token_length: 8,
            overload_max_age: 2,
            block_szx: 6,
            single_message_payload: None,
            max_body_size: 1 << 20,
            max_uploads: 16,
            max_reassembly_bytes: 4 << 20,
            block_cache_lifetime: Duration::from_secs(60),
            max_observers: 1024,
            fair_share: FairShare::default(),
            observe_con_every: 20,
            observe_con_interval: Duration::from_secs(24 * 3600),
            multicast_window_override: None,
            leisure: None,
            group_size: None,
            target_rate: None,
            amplification: AmplificationLimit::default(),
        }
    }
}

/// The share of each shared table (incoming requests, peers, observers, Block1 uploads and
/// their bytes, Block2 bodies) one peer (address and port) and one source (an IPv4 address, or
/// an IPv6 /64) may hold once the table is full, in percent of its capacity (at least one
/// entry). A table with room takes anyone; a full one refuses a newcomer beyond its share
/// (5.03 with Max-Age) and makes room for one within its share by evicting an entry of the
/// peer, else the source, most beyond its share. Shares under 7 % may miss a heavy holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FairShare {
    /// Percent of a full table one peer may hold.
    pub peer_percent: u8,
    /// Percent of a full table one source may hold (at least the peer's share).
    pub source_percent: u8,
}

impl Default for FairShare {
    fn default() -> FairShare {
        FairShare {
            peer_percent: 25,
            source_percent: 50,
        }
    }
}

impl Config {
    /// A profile for constrained nodes (the lab's motes, small boards): a handful of peers
    /// and exchanges, 1 152-byte datagrams so a 1 024-byte payload fits one message
    /// (block-wise beyond), and small tables. Holds under 8 KiB of heap when idle.
    pub fn constrained() -> Config {
        Config {
            max_message_size: 1152,
            max_peers: 4,
            max_exchanges: 4,
            max_incoming: 4,
            max_dedup_entries: 16,
            max_buffers: 8,
            pool_retain_bytes: 2048,
            max_queued_per_peer: 2,
            max_events: 8,
            max_app_timers: 4,
            max_body_size: 4096,
            max_uploads: 1,
            max_reassembly_bytes: 4096,
            max_observers: 4,
            // Four entries per table: a peer may keep two, a source three.
            fair_share: FairShare {
                peer_percent: 50,
                source_percent: 75,
            },
            ..Config::default()
        }
    }

    /// Block size in bytes for transfers this endpoint starts or slices.
    pub fn block_size(&self) -> usize {
        16 << self.block_szx.min(6)
    }

    /// How long a multicast request collects responses: the leisure plus one
    /// MAX_LATENCY-free margin of ACK_TIMEOUT, unless overridden.
    pub fn multicast_window(&self) -> Duration {
        self.multicast_window_override
            .unwrap_or_else(|| self.leisure_for(0) + self.transmission.ack_timeout)
    }

    /// Leisure for a response of `size` bytes to a multicast request: the configured
    /// value, or S·G/R (RFC 7252 §8.2) when G and R are known, else DEFAULT_LEISURE.
    pub fn leisure_for(&self, size: usize) -> Duration {
        if let Some(l) = self.leisure {
            return l;
        }
        match (self.group_size, self.target_rate) {
            (Some(g), Some(r)) if r > 0 && size > 0 => {
                let nanos = (size as u128 * g as u128 * 1_000_000_000) / r as u128;
                Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
            }
            _ => self.transmission.default_leisure,
        }
    }

    /// The effective message-ID reuse interval.
    pub fn mid_reuse(&self) -> Duration {
        self.mid_reuse_interval
            .unwrap_or_else(|| self.transmission.exchange_lifetime())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leisure_lower_bound_matches_g1_to_g4() {
        let mut c = Config::default();
        assert_eq!(
            c.leisure_for(100),
            Duration::from_secs(5),
            "DEFAULT_LEISURE without data"
        );
        let cases = [
            (100, 100, 1000, 10.0),
            (100, 50, 1000, 5.0),
            (60, 200, 250, 48.0),
            (200, 50, 1000, 10.0),
        ];
        for (s, g, r, expected) in cases {
            c.group_size = Some(g);
            c.target_rate = Some(r);
            assert_eq!(
                c.leisure_for(s).as_secs_f64(),
                expected,
                "S={s} G={g} R={r}"
            );
        }
        c.leisure = Some(Duration::from_millis(300));
        assert_eq!(c.leisure_for(100), Duration::from_millis(300));
    }
}
