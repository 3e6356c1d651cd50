//! Endpoint configuration: transmission parameters, the congestion-control algorithm and the
//! capacity of every table, so memory is bounded by configuration.

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
    /// Largest datagram sent or accepted (bytes); larger input is dropped.
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
    /// EXCHANGE_LIFETIME; `None` uses that.
    pub mid_reuse_interval: Option<Duration>,
    /// Length of the tokens this endpoint generates (1–8 bytes).
    pub token_length: usize,
    /// Max-Age (seconds) sent with 5.03 when a table is full.
    pub overload_max_age: u32,
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
            max_queued_per_peer: 64,
            max_events: 1024,
            max_app_timers: 64,
            piggyback_window: Duration::from_millis(1000),
            mid_reuse_interval: None,
            token_length: 8,
            overload_max_age: 2,
        }
    }
}

impl Config {
    /// The effective message-ID reuse interval.
    pub fn mid_reuse(&self) -> Duration {
        self.mid_reuse_interval
            .unwrap_or_else(|| self.transmission.exchange_lifetime())
    }
}
