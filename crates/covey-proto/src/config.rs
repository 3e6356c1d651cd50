//! Endpoint configuration: transmission parameters, the congestion-control algorithm and the
//! capacity of every table, so memory is bounded by configuration.

use core::fmt;

use crate::amplification_limit::AmplificationLimit;
use crate::cc::Algorithm;
use crate::transmission_parameters::{InvalidParameter, TransmissionParameters};
use crate::Duration;

/// Everything an [`crate::Endpoint`] needs to know up front. Defaults follow RFC 7252.
///
/// [`Config::validate`] checks the fields against each other; every constructor that takes a
/// `Config` (`Endpoint::new`) runs it and refuses a configuration that breaks a rule.
#[derive(Debug, Clone)]
pub struct Config {
    /// ACK_TIMEOUT, ACK_RANDOM_FACTOR, MAX_RETRANSMIT, NSTART, leisure, ...
    pub transmission: TransmissionParameters,
    /// Retransmission-timeout estimator used for every peer.
    pub congestion_control: Algorithm,
    /// Largest datagram sent or accepted (bytes); larger input is dropped, a unicast CON
    /// request after a 4.13 answer. At least [`min_message_size`](Self::min_message_size)
    /// (a block with its headers), at most 65 535.
    pub max_message_size: usize,
    /// Peers with state (MIDs, RTO estimators, queues) at once (at least 1).
    pub max_peers: usize,
    /// Outgoing requests (client exchanges) at once, queued ones included.
    pub max_exchanges: usize,
    /// Incoming requests the application has not answered yet.
    pub max_incoming: usize,
    /// Deduplication entries (peer, message ID) remembered at once (1 to 2^32 − 1).
    pub max_dedup_entries: usize,
    /// Datagram buffers: outgoing queue, retransmission copies, cached replies, received
    /// messages awaiting the application. Half bound the outgoing queue, half the reply
    /// cache, so at least 2.
    pub max_buffers: usize,
    /// Bytes of freed datagram buffers kept for reuse (beyond, they are returned to the
    /// allocator): enough for the steady state to allocate nothing.
    pub pool_retain_bytes: usize,
    /// Requests waiting for an NSTART slot, per peer.
    pub max_queued_per_peer: usize,
    /// Events waiting for the application (at least 1).
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
    /// (size 2^(szx+4): 0 to 6, 16 to 1024 bytes; 7 is reserved).
    pub block_szx: u8,
    /// Largest response payload sent in one message when the client asked for no block;
    /// larger ones go block-wise. `None`: one block (`block_size()`), as RFC 7959
    /// implementations do; a constrained link may prefer one fragmented datagram. Between one
    /// block and `max_message_size`.
    pub single_message_payload: Option<usize>,
    /// Largest body assembled or uploaded block-wise (bytes).
    pub max_body_size: usize,
    /// Block1 uploads being reassembled at once (server side), and Block2 bodies kept (at
    /// least 1).
    pub max_uploads: usize,
    /// Bytes held by all Block1 reassemblies together.
    pub max_reassembly_bytes: usize,
    /// How long a response body sliced into Block2 blocks is kept for the later blocks.
    pub block_cache_lifetime: Duration,
    /// Observers registered at once (server side).
    pub max_observers: usize,
    /// What one peer and one source may hold of each shared table once it is full.
    pub fair_share: FairShare,
    /// Every n-th notification to an observer is sent CON (the others NON); at least 1.
    pub observe_con_every: u32,
    /// A CON notification is sent at least this often to each observer (RFC 7641: 24 h).
    pub observe_con_interval: Duration,
    /// How long a multicast request collects responses.
    pub multicast_window_override: Option<Duration>,
    /// Leisure for responses to multicast requests; `None` derives it from `group_size`
    /// and `target_rate` when both are set, else DEFAULT_LEISURE.
    pub leisure: Option<Duration>,
    /// Estimated group size G for the leisure lower bound S·G/R (at least 1).
    pub group_size: Option<u32>,
    /// Target data rate R in bytes/s for the leisure lower bound S·G/R (at least 1).
    pub target_rate: Option<u32>,
    /// What peers whose address is not verified may be sent (RFC 9175 Echo).
    pub amplification: AmplificationLimit,
    /// OSCORE security contexts the host may add (`Endpoint::add_oscore_context`).
    #[cfg(feature = "oscore")]
    pub max_oscore_contexts: usize,
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
            pool_retain_bytes: bytes(256 << 10),
            max_queued_per_peer: 64,
            max_events: 1024,
            max_app_timers: 64,
            piggyback_window: Duration::from_millis(1000),
            mid_reuse_interval: None,
            token_length: 8,
            overload_max_age: 2,
            block_szx: 6,
            single_message_payload: None,
            max_body_size: bytes(1 << 20),
            max_uploads: 16,
            max_reassembly_bytes: bytes(4 << 20),
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
            #[cfg(feature = "oscore")]
            max_oscore_contexts: 16,
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
    /// Percent of a full table one peer may hold (1 to 100).
    pub peer_percent: u8,
    /// Percent of a full table one source may hold (the peer's share to 100).
    pub source_percent: u8,
}

/// Bytes a message carrying one block adds to it besides the token: the 4-byte header, a
/// Block2 option of up to 5 bytes (option header with extended delta, 3-byte value) and the
/// payload marker.
const BLOCK_MESSAGE_OVERHEAD: usize = 4 + 5 + 1;

/// Why [`Config::validate`] refused a configuration: the field (as a path from `Config`) and
/// the values it may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// `transmission` breaks a constraint of RFC 7252 §4.8.
    Transmission(InvalidParameter),
    /// A number outside the range its field allows (`max: u64::MAX` means no upper bound).
    OutOfRange {
        /// The field, e.g. `"block_szx"` or `"fair_share.peer_percent"`.
        field: &'static str,
        /// The value given.
        value: u64,
        /// The smallest value allowed.
        min: u64,
        /// The largest value allowed.
        max: u64,
    },
    /// A duration that must be longer than zero is zero.
    ZeroDuration {
        /// The field, e.g. `"response_timeout"`.
        field: &'static str,
    },
    /// `congestion_control` names an algorithm this build of the engine leaves out (a
    /// node's, without the `rto-estimators` feature).
    AlgorithmNotBuilt(Algorithm),
    /// `amplification` is enabled, but this build of the engine leaves address validation
    /// out (a node's, without the `address-validation` feature): set it to
    /// `AmplificationLimit::off()`.
    AmplificationLimitNotBuilt,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ConfigError::Transmission(p) => write!(f, "bad transmission parameter: {p}"),
            ConfigError::OutOfRange {
                field,
                value,
                min,
                max,
            } => {
                write!(f, "{field} is {value}, but must be ")?;
                match max {
                    u64::MAX => write!(f, "at least {min}")?,
                    _ => write!(f, "{min} to {max}")?,
                }
                match field {
                    "max_message_size" => {
                        f.write_str(" (a block of block_size() bytes with its header and token)")
                    }
                    "single_message_payload" => f.write_str(" (one block to max_message_size)"),
                    "fair_share.source_percent" => {
                        f.write_str(" (at least fair_share.peer_percent)")
                    }
                    _ => Ok(()),
                }
            }
            ConfigError::ZeroDuration { field } => write!(f, "{field} must be longer than zero"),
            ConfigError::AlgorithmNotBuilt(a) => write!(
                f,
                "congestion control {a} is not in this build (its rto-estimators feature is off)"
            ),
            ConfigError::AmplificationLimitNotBuilt => f.write_str(
                "the amplification limit is not in this build (its address-validation feature \
                 is off): turn amplification off",
            ),
        }
    }
}

impl core::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ConfigError::Transmission(p) => Some(p),
            _ => None,
        }
    }
}

impl Default for FairShare {
    fn default() -> FairShare {
        FairShare {
            peer_percent: 25,
            source_percent: 50,
        }
    }
}

/// `n` bytes, or as many as a 16-bit target can count (MSP430: 64 KiB in all).
const fn bytes(n: u32) -> usize {
    if n as u64 > usize::MAX as u64 {
        usize::MAX
    } else {
        n as usize
    }
}

impl Config {
    /// A profile for constrained nodes (the lab's motes, small boards): a handful of peers
    /// and exchanges, 1 152-byte datagrams so a 1 024-byte payload fits one message
    /// (block-wise beyond), and small tables, the amplification limit's included. Holds about
    /// 3 KiB of heap when idle and under 7 KiB once its tables are full (after requests from
    /// a thousand ports), on a 64-bit host.
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
            // As many verified and counted addresses as peers, not the default's thousand.
            amplification: AmplificationLimit {
                max_verified_peers: 4,
                max_unverified_peers: 4,
                ..AmplificationLimit::default()
            },
            ..Config::default()
        }
    }

    /// A profile for a sensor node's firmware (`firmware/covey-mote`): the constrained
    /// profile with messages of at most 576 bytes, so a payload of up to 512 bytes goes in one
    /// message (TinyCoAP's Table 3 compares stacks at a 500-byte maximum payload) and larger
    /// ones block-wise in 512-byte blocks, and a buffer pool that keeps no free buffers: the
    /// mote's first-fit allocator reuses a freed block itself, and 1 KiB of idle buffers is a
    /// tenth of a TelosB-class node's RAM. The reply cache and pool are what scale with the
    /// message size. Holds under 6.5 KiB of heap once its tables are full (after requests from
    /// a thousand ports) on a 64-bit host, and about 4 KiB on the mote.
    pub fn mote() -> Config {
        Config {
            max_message_size: 576,
            block_szx: 5,
            pool_retain_bytes: 0,
            ..Config::constrained()
        }
    }

    /// Block size in bytes for transfers this endpoint starts or slices (for the
    /// `block_szx` of 0 to 6 that [`validate`](Self::validate) allows).
    pub fn block_size(&self) -> usize {
        16usize
            .checked_shl(u32::from(self.block_szx))
            .unwrap_or(usize::MAX)
    }

    /// The smallest `max_message_size` that carries one block of
    /// [`block_size`](Self::block_size) bytes: the 4-byte header, the token, a Block2 option
    /// (up to 5 bytes) and the payload marker come on top.
    pub fn min_message_size(&self) -> usize {
        self.block_size()
            .saturating_add(BLOCK_MESSAGE_OVERHEAD)
            .saturating_add(self.token_length)
    }

    /// Checks every field and the fields against each other: the first rule broken, or
    /// `Ok`. `Endpoint::new` runs it, so an endpoint only ever holds a valid configuration.
    pub fn validate(&self) -> Result<(), ConfigError> {
        use ConfigError::{OutOfRange, ZeroDuration};
        self.transmission
            .validate()
            .map_err(ConfigError::Transmission)?;
        if !self.congestion_control.is_built() {
            return Err(ConfigError::AlgorithmNotBuilt(self.congestion_control));
        }
        if self.amplification.enabled && !cfg!(feature = "address-validation") {
            return Err(ConfigError::AmplificationLimitNotBuilt);
        }
        let at_least = |field, value: usize, min: u64| match value as u64 >= min {
            true => Ok(()),
            false => Err(OutOfRange {
                field,
                value: value as u64,
                min,
                max: u64::MAX,
            }),
        };
        let within = |field, value: u64, min: u64, max: u64| match (min..=max).contains(&value) {
            true => Ok(()),
            false => Err(OutOfRange {
                field,
                value,
                min,
                max,
            }),
        };
        let positive = |field, value: Duration| match value.is_zero() {
            true => Err(ZeroDuration { field }),
            false => Ok(()),
        };
        within("block_szx", self.block_szx.into(), 0, 6)?;
        within("token_length", self.token_length as u64, 1, 8)?;
        within(
            "max_message_size",
            self.max_message_size as u64,
            self.min_message_size() as u64,
            u64::from(u16::MAX),
        )?;
        if let Some(single) = self.single_message_payload {
            within(
                "single_message_payload",
                single as u64,
                self.block_size() as u64,
                self.max_message_size as u64,
            )?;
        }
        at_least("max_peers", self.max_peers, 1)?;
        within(
            "max_dedup_entries",
            self.max_dedup_entries as u64,
            1,
            u64::from(u32::MAX),
        )?;
        at_least("max_buffers", self.max_buffers, 2)?;
        at_least("max_events", self.max_events, 1)?;
        at_least("max_uploads", self.max_uploads, 1)?;
        positive("response_timeout", self.response_timeout)?;
        within(
            "observe_con_every",
            self.observe_con_every.into(),
            1,
            u32::MAX.into(),
        )?;
        let share = self.fair_share;
        within("fair_share.peer_percent", share.peer_percent.into(), 1, 100)?;
        within(
            "fair_share.source_percent",
            share.source_percent.into(),
            share.peer_percent.into(),
            100,
        )?;
        if let Some(g) = self.group_size {
            within("group_size", g.into(), 1, u32::MAX.into())?;
        }
        if let Some(r) = self.target_rate {
            within("target_rate", r.into(), 1, u32::MAX.into())?;
        }
        let limit = &self.amplification;
        if limit.enabled {
            within(
                "amplification.factor",
                limit.factor.into(),
                1,
                u32::MAX.into(),
            )?;
            positive("amplification.echo_lifetime", limit.echo_lifetime)?;
            positive("amplification.verified_lifetime", limit.verified_lifetime)?;
            positive("amplification.account_lifetime", limit.account_lifetime)?;
            at_least(
                "amplification.max_verified_peers",
                limit.max_verified_peers,
                1,
            )?;
            at_least(
                "amplification.max_unverified_peers",
                limit.max_unverified_peers,
                1,
            )?;
        }
        Ok(())
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
                // Whole seconds, then the remainder's nanoseconds: exact in u64 (the
                // remainder is below r, a u32), where one u128 division costs a mote
                // about 750 B of flash.
                let bytes = (size as u64).saturating_mul(g.into());
                let (r, seconds) = (u64::from(r), bytes / u64::from(r));
                Duration::new(seconds, ((bytes % r) * 1_000_000_000 / r) as u32)
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
    use crate::transmission_parameters::RandomFactor;
    use alloc::string::ToString;

    #[test]
    fn the_profiles_are_valid() {
        assert_eq!(Config::default().validate(), Ok(()));
        assert_eq!(Config::constrained().validate(), Ok(()));
        assert_eq!(Config::mote().validate(), Ok(()));
        let off = Config {
            amplification: AmplificationLimit {
                factor: 0,
                max_verified_peers: 0,
                ..AmplificationLimit::off()
            },
            ..Config::default()
        };
        assert_eq!(off.validate(), Ok(()), "a limit that is off is not checked");
        // Tables a client-only or server-only endpoint leaves empty.
        let empty = Config {
            max_exchanges: 0,
            max_incoming: 0,
            max_queued_per_peer: 0,
            max_app_timers: 0,
            max_observers: 0,
            max_body_size: 0,
            max_reassembly_bytes: 0,
            pool_retain_bytes: 0,
            ..Config::constrained()
        };
        assert_eq!(empty.validate(), Ok(()));
        let smallest = Config {
            block_szx: 0,
            token_length: 1,
            max_message_size: 16 + 10 + 1,
            single_message_payload: Some(16),
            ..Config::default()
        };
        assert_eq!(smallest.validate(), Ok(()));
    }

    #[test]
    fn each_rule_refuses_a_bad_value_with_its_message() {
        let ok = Config::default;
        let cases: [(Config, &str); 21] = [
            (
                Config {
                    transmission: TransmissionParameters {
                        nstart: 0,
                        ..TransmissionParameters::default()
                    },
                    ..ok()
                },
                "bad transmission parameter: NSTART must be at least 1",
            ),
            (
                Config {
                    transmission: TransmissionParameters {
                        ack_random_factor: RandomFactor::from_thousandths(500),
                        ..TransmissionParameters::default()
                    },
                    ..ok()
                },
                "bad transmission parameter: ACK_RANDOM_FACTOR must be at least 1.0",
            ),
            (
                Config {
                    block_szx: 7,
                    ..ok()
                },
                "block_szx is 7, but must be 0 to 6",
            ),
            (
                Config {
                    token_length: 0,
                    ..ok()
                },
                "token_length is 0, but must be 1 to 8",
            ),
            (
                Config {
                    token_length: 9,
                    ..ok()
                },
                "token_length is 9, but must be 1 to 8",
            ),
            (
                Config {
                    max_message_size: 1041,
                    ..ok()
                },
                "max_message_size is 1041, but must be 1042 to 65535 \
                 (a block of block_size() bytes with its header and token)",
            ),
            (
                Config {
                    max_message_size: 65536,
                    ..ok()
                },
                "max_message_size is 65536, but must be 1042 to 65535 \
                 (a block of block_size() bytes with its header and token)",
            ),
            (
                Config {
                    single_message_payload: Some(512),
                    ..ok()
                },
                "single_message_payload is 512, but must be 1024 to 1280 \
                 (one block to max_message_size)",
            ),
            (
                Config {
                    single_message_payload: Some(1281),
                    ..ok()
                },
                "single_message_payload is 1281, but must be 1024 to 1280 \
                 (one block to max_message_size)",
            ),
            (
                Config {
                    max_peers: 0,
                    ..ok()
                },
                "max_peers is 0, but must be at least 1",
            ),
            (
                Config {
                    max_dedup_entries: 0,
                    ..ok()
                },
                "max_dedup_entries is 0, but must be 1 to 4294967295",
            ),
            (
                Config {
                    max_buffers: 1,
                    ..ok()
                },
                "max_buffers is 1, but must be at least 2",
            ),
            (
                Config {
                    max_events: 0,
                    ..ok()
                },
                "max_events is 0, but must be at least 1",
            ),
            (
                Config {
                    max_uploads: 0,
                    ..ok()
                },
                "max_uploads is 0, but must be at least 1",
            ),
            (
                Config {
                    response_timeout: Duration::ZERO,
                    ..ok()
                },
                "response_timeout must be longer than zero",
            ),
            (
                Config {
                    observe_con_every: 0,
                    ..ok()
                },
                "observe_con_every is 0, but must be 1 to 4294967295",
            ),
            (
                Config {
                    fair_share: FairShare {
                        peer_percent: 0,
                        source_percent: 50,
                    },
                    ..ok()
                },
                "fair_share.peer_percent is 0, but must be 1 to 100",
            ),
            (
                Config {
                    fair_share: FairShare {
                        peer_percent: 60,
                        source_percent: 50,
                    },
                    ..ok()
                },
                "fair_share.source_percent is 50, but must be 60 to 100 \
                 (at least fair_share.peer_percent)",
            ),
            (
                Config {
                    fair_share: FairShare {
                        peer_percent: 25,
                        source_percent: 101,
                    },
                    ..ok()
                },
                "fair_share.source_percent is 101, but must be 25 to 100 \
                 (at least fair_share.peer_percent)",
            ),
            (
                Config {
                    group_size: Some(0),
                    ..ok()
                },
                "group_size is 0, but must be 1 to 4294967295",
            ),
            (
                Config {
                    target_rate: Some(0),
                    ..ok()
                },
                "target_rate is 0, but must be 1 to 4294967295",
            ),
        ];
        for (config, message) in cases {
            let error = config.validate().expect_err(message);
            assert_eq!(error.to_string(), message);
        }
    }

    #[test]
    #[cfg(feature = "address-validation")]
    fn each_amplification_rule_refuses_a_bad_value_with_its_message() {
        let ok = Config::default;
        let amp = AmplificationLimit::default;
        let cases: [(Config, &str); 4] = [
            (
                Config {
                    amplification: AmplificationLimit { factor: 0, ..amp() },
                    ..ok()
                },
                "amplification.factor is 0, but must be 1 to 4294967295",
            ),
            (
                Config {
                    amplification: AmplificationLimit {
                        echo_lifetime: Duration::ZERO,
                        ..amp()
                    },
                    ..ok()
                },
                "amplification.echo_lifetime must be longer than zero",
            ),
            (
                Config {
                    amplification: AmplificationLimit {
                        max_verified_peers: 0,
                        ..amp()
                    },
                    ..ok()
                },
                "amplification.max_verified_peers is 0, but must be at least 1",
            ),
            (
                Config {
                    amplification: AmplificationLimit {
                        max_unverified_peers: 0,
                        ..amp()
                    },
                    ..ok()
                },
                "amplification.max_unverified_peers is 0, but must be at least 1",
            ),
        ];
        for (config, message) in cases {
            let error = config.validate().expect_err(message);
            assert_eq!(error.to_string(), message);
        }
        let lifetimes = [
            AmplificationLimit {
                verified_lifetime: Duration::ZERO,
                ..amp()
            },
            AmplificationLimit {
                account_lifetime: Duration::ZERO,
                ..amp()
            },
        ];
        for amplification in lifetimes {
            let config = Config {
                amplification,
                ..ok()
            };
            assert!(matches!(
                config.validate(),
                Err(ConfigError::ZeroDuration { .. })
            ));
        }
    }

    /// A build without address validation runs its default, and refuses a limit asked for
    /// rather than run without it.
    #[test]
    #[cfg(not(feature = "address-validation"))]
    fn an_amplification_limit_is_refused_where_it_is_not_built() {
        assert!(Config::default().validate().is_ok());
        let asked = Config {
            amplification: AmplificationLimit {
                enabled: true,
                ..AmplificationLimit::default()
            },
            ..Config::default()
        };
        let error = asked.validate().unwrap_err();
        assert_eq!(error, ConfigError::AmplificationLimitNotBuilt);
        assert!(error
            .to_string()
            .contains("address-validation feature is off"));
    }

    #[test]
    fn the_message_size_rule_follows_the_block_and_the_token() {
        let small = Config {
            block_szx: 3,
            token_length: 4,
            ..Config::default()
        };
        assert_eq!(small.block_size(), 128);
        assert_eq!(small.min_message_size(), 128 + 10 + 4);
        for (size, valid) in [(141, false), (142, true), (256, true)] {
            let c = Config {
                max_message_size: size,
                ..small.clone()
            };
            assert_eq!(c.validate().is_ok(), valid, "{size}");
        }
    }

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
