//! Linux's Token Bucket Filter (`tc qdisc … tbf`) as a link element: a shaper, not a
//! serialiser. A packet leaves as soon as the bucket holds at least its size in tokens, so a
//! burst of up to `burst` bytes leaves at line speed and only a sustained load is held to
//! `rate`.
//!
//! Sources, and what this model takes from each:
//!
//! - tc-tbf(8) (iproute2, `man/man8/tc-tbf.8`): tokens correspond to bytes; on creation the
//!   bucket is full ("stocked with tokens which correspond to the amount of traffic that can
//!   be burst in one go"); tokens arrive at `rate` until the bucket (`burst`, also called
//!   `buffer`/`maxburst`) is full; without tokens, packets queue up to `limit` bytes and the
//!   TBF "throttles until the first packet in the queue can be sent". `latency` is the other
//!   way to give the limit; `peakrate` is "a second TBF with a very small bucket" of
//!   `mtu`/`minburst` bytes. The minimum burst is `rate / HZ` (tokens arriving per timer
//!   tick); with high-resolution timers (since Linux 2.6.2x) that is no longer the bound in
//!   practice, the packet size is (below).
//! - iproute2 `tc/q_tbf.c` (`tbf_parse_opt`): `latency` becomes
//!   `limit = rate × latency + burst`, and with a peak rate the smaller of that and
//!   `peakrate × latency + mtu`; rates are bytes per second there and the limit is truncated
//!   to whole bytes — [`TbfConfig::with_latency`] does the same in integers.
//! - Linux `net/sched/sch_tbf.c`: `tbf_dequeue` peeks the head of the child queue, adds the
//!   time since the last departure to the tokens (capped at the bucket, the peak bucket
//!   likewise), subtracts the head's length in time units, and sends it only when both
//!   buckets stay ≥ 0; otherwise it arms a watchdog for the deficit and never lets a
//!   shorter packet overtake ("We MUST NOT reorder packets"). The default child is a
//!   `bfifo` of `limit` bytes, which drops an arriving packet that would take the backlog
//!   over the limit. `tbf_enqueue` drops a packet longer than `max_size` (the bucket, or the
//!   peak bucket if smaller): such a packet could never gather enough tokens. Only a GSO
//!   super-packet whose segments fit is split (`tbf_segment`) and its segments queued one
//!   by one; a plain packet larger than the bucket is dropped. The emulator's TUN devices
//!   carry no GSO packets, so here every packet over `max_size` is dropped
//!   ([`super::LossCause::TooLarge`]); `tbf_change` only warns when the bucket is smaller
//!   than the device MTU.
//!
//! Arithmetic: the kernel keeps tokens as nanoseconds of transmission time. Here they are
//! kept exactly, as integers in units of one bit-nanosecond-per-second: one byte is
//! `8 × 10⁹` units and a bucket of `rate` bit/s gains exactly `rate` units per nanosecond.
//! A deficit of `d` units is covered after `⌈d / rate⌉` ns; the rounding surplus stays in the
//! bucket, so departure times never drift however long a run is.

use covey_proto::{Duration, Instant};

/// Token units per byte: a bucket at `r` bit/s gains `r` units per nanosecond.
const UNITS_PER_BYTE: u128 = 8 * 1_000_000_000;

/// The line rate behind the shaper when none is given: a gigabit interface (the emulator's
/// TUN devices have no rate of their own).
pub const DEFAULT_LINE_BPS: u64 = 1_000_000_000;

/// The peak-rate bucket (`peakrate … mtu|minburst …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TbfPeak {
    /// Peak rate in bit/s (must exceed the rate, as `tbf_change` requires).
    pub rate_bps: u64,
    /// Size of the peak bucket in bytes (tc's `mtu`/`minburst`).
    pub mtu_bytes: u64,
}

/// Which impairment a packet meets first on one direction, as the qdiscs of a Linux host
/// would be stacked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QdiscOrder {
    /// netem first (loss drawn, delay and jitter added, packets reordered by their jittered
    /// due times), then tbf shapes what netem releases, then the line. This is what one
    /// interface with both qdiscs does in either hierarchy: with netem as root and tbf as its
    /// child, netem hands a packet to tbf once it is due; with tbf as root and netem as its
    /// child, `tbf_dequeue` peeks netem, which shows no packet before it is due — and tbf's
    /// own `limit` then no longer applies (the bfifo it configures was replaced). Lost
    /// packets spend no tokens.
    #[default]
    NetemThenTbf,
    /// tbf first, then the line, then loss and delay per frame, as the rate serialiser does
    /// today: a shaper on the sender with the impairment further along the path (netem on
    /// another hop, or on the receiver's ingress). Lost packets have spent their tokens.
    TbfThenNetem,
}

/// A tbf qdisc's parameters, in tc-tbf(8)'s terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TbfConfig {
    /// Token rate in bit/s (tc's `rate`; tc writes bytes/s as `Bps`/`kbps`: 6.25 kB/s is
    /// `rate 50kbit`).
    pub rate_bps: u64,
    /// Bucket size in bytes (tc's `burst`/`buffer`/`maxburst`).
    pub burst_bytes: u64,
    /// Bytes that may wait for tokens (tc's `limit`); see [`TbfConfig::with_latency`].
    pub limit_bytes: u64,
    /// The optional peak-rate bucket.
    pub peak: Option<TbfPeak>,
    /// Rate of the line the shaper feeds, bit/s: a released packet is serialised at this
    /// rate (fragments back to back) before it arrives, or before netem in
    /// [`QdiscOrder::TbfThenNetem`].
    pub line_bps: u64,
    /// Whether netem's loss and delay come before or after the shaper.
    pub order: QdiscOrder,
}

impl TbfConfig {
    /// `tbf rate <rate_bps>bit burst <burst_bytes> limit <limit_bytes>` on a gigabit line,
    /// netem first.
    pub fn with_limit(rate_bps: u64, burst_bytes: u64, limit_bytes: u64) -> TbfConfig {
        TbfConfig {
            rate_bps,
            burst_bytes,
            limit_bytes,
            peak: None,
            line_bps: DEFAULT_LINE_BPS,
            order: QdiscOrder::default(),
        }
    }

    /// `tbf rate <rate_bps>bit burst <burst_bytes> latency <latency>`: the limit is
    /// `rate × latency + burst` bytes, truncated, as `tc/q_tbf.c` computes it.
    pub fn with_latency(rate_bps: u64, burst_bytes: u64, latency: Duration) -> TbfConfig {
        let mut c = TbfConfig::with_limit(rate_bps, burst_bytes, 0);
        c.limit_bytes = c.limit_for_latency(latency);
        c
    }

    /// The limit tc derives from `latency`: `rate × latency + burst`, and with a peak rate
    /// the smaller of that and `peakrate × latency + mtu`.
    pub fn limit_for_latency(&self, latency: Duration) -> u64 {
        let ns = latency.as_nanos();
        let bytes = |rate_bps: u64| {
            u64::try_from(u128::from(rate_bps) * ns / UNITS_PER_BYTE).unwrap_or(u64::MAX)
        };
        let lim = bytes(self.rate_bps).saturating_add(self.burst_bytes);
        match self.peak {
            Some(p) => lim.min(bytes(p.rate_bps).saturating_add(p.mtu_bytes)),
            None => lim,
        }
    }

    /// The smallest bucket tc-tbf(8) allows for `rate_bps` on a kernel ticking `hz` times a
    /// second: the tokens one tick brings, `rate / HZ` bytes (rounded up).
    pub fn min_burst_for_hz(rate_bps: u64, hz: u64) -> u64 {
        rate_bps.div_ceil(8 * hz.max(1))
    }

    /// The largest packet the filter passes (`max_size` in `sch_tbf.c`): the bucket, or the
    /// peak bucket if smaller.
    pub fn max_size(&self) -> u64 {
        match self.peak {
            Some(p) => self.burst_bytes.min(p.mtu_bytes),
            None => self.burst_bytes,
        }
    }

    /// The time `bytes` take on the line behind the shaper (rounded up to the nanosecond).
    pub fn line_time(&self, bytes: usize) -> Duration {
        let bits = bytes as u128 * UNITS_PER_BYTE;
        let rate = u128::from(self.line_bps.max(1));
        Duration::from_nanos(u64::try_from(bits.div_ceil(rate)).unwrap_or(u64::MAX))
    }
}

/// One bucket: exact integer tokens at a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bucket {
    rate: u128,
    capacity: u128,
    tokens: u128,
}

impl Bucket {
    fn new(rate_bps: u64, bytes: u64) -> Bucket {
        let capacity = u128::from(bytes) * UNITS_PER_BYTE;
        Bucket {
            rate: u128::from(rate_bps.max(1)),
            capacity,
            tokens: capacity,
        }
    }

    /// Tokens after `elapsed` ns more.
    fn fill(&self, elapsed: u64) -> u128 {
        self.tokens
            .saturating_add(self.rate.saturating_mul(u128::from(elapsed)))
            .min(self.capacity)
    }

    /// Nanoseconds after `elapsed` until `cost` units are there (0 if they are).
    fn wait(&self, elapsed: u64, cost: u128) -> u64 {
        let have = self.fill(elapsed);
        if have >= cost {
            return 0;
        }
        u64::try_from((cost - have).div_ceil(self.rate)).unwrap_or(u64::MAX)
    }
}

/// The token state of a tbf: the bucket and the optional peak bucket at the last departure
/// (`t_c` in `sch_tbf.c`). Full when made, as `tbf_change` leaves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBucket {
    main: Bucket,
    peak: Option<Bucket>,
    checkpoint: Instant,
    max_size: u64,
}

impl TokenBucket {
    /// A full bucket (and peak bucket) for `config`, with its checkpoint at `now`.
    pub fn new(config: &TbfConfig, now: Instant) -> TokenBucket {
        TokenBucket {
            main: Bucket::new(config.rate_bps, config.burst_bytes),
            peak: config.peak.map(|p| Bucket::new(p.rate_bps, p.mtu_bytes)),
            checkpoint: now,
            max_size: config.max_size(),
        }
    }

    /// Whole bytes of tokens in the bucket at `at` (not before the last departure).
    pub fn tokens_at(&self, at: Instant) -> u64 {
        let elapsed = at.saturating_duration_since(self.checkpoint).as_nanos() as u64;
        u64::try_from(self.main.fill(elapsed) / UNITS_PER_BYTE).unwrap_or(u64::MAX)
    }

    /// The earliest time, not before `now` nor the last departure, at which a packet of
    /// `bytes` may leave; `None` if it never can (larger than the bucket, so dropped).
    pub fn ready_at(&self, now: Instant, bytes: u64) -> Option<Instant> {
        if bytes > self.max_size {
            return None;
        }
        let from = now.max(self.checkpoint);
        let elapsed = (from - self.checkpoint).as_nanos() as u64;
        let cost = u128::from(bytes) * UNITS_PER_BYTE;
        let wait = self.main.wait(elapsed, cost).max(
            self.peak
                .as_ref()
                .map_or(0, |p: &Bucket| p.wait(elapsed, cost)),
        );
        Some(from + Duration::from_nanos(wait))
    }

    /// Spends the tokens of a packet of `bytes` leaving at `at`, which must be at or after
    /// [`TokenBucket::ready_at`] for it.
    pub fn take(&mut self, at: Instant, bytes: u64) {
        let elapsed = at.saturating_duration_since(self.checkpoint).as_nanos() as u64;
        let cost = u128::from(bytes) * UNITS_PER_BYTE;
        self.main.tokens = self.main.fill(elapsed).saturating_sub(cost);
        if let Some(p) = &mut self.peak {
            p.tokens = p.fill(elapsed).saturating_sub(cost);
        }
        self.checkpoint = self.checkpoint.max(at);
    }

    /// [`TokenBucket::ready_at`] then [`TokenBucket::take`]: when the packet leaves.
    pub fn depart(&mut self, now: Instant, bytes: u64) -> Option<Instant> {
        let at = self.ready_at(now, bytes)?;
        self.take(at, bytes);
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The low-quality point of seed 004: 6.25 kB/s.
    const RATE: u64 = 50_000;

    #[test]
    fn a_packet_within_the_tokens_leaves_at_once() {
        let c = TbfConfig::with_limit(RATE, 4096, 10_000);
        let mut b = TokenBucket::new(&c, Instant::ZERO);
        let t = Instant::from_millis(5);
        // Nine 437-byte packets (3933 B) fit the full 4096-byte bucket: all leave at t.
        for _ in 0..9 {
            assert_eq!(b.depart(t, 437), Some(t));
        }
        assert_eq!(b.tokens_at(t), 4096 - 9 * 437);
    }

    #[test]
    fn the_wait_is_the_deficit_over_the_rate_exactly() {
        let c = TbfConfig::with_limit(RATE, 437, 10_000);
        let mut b = TokenBucket::new(&c, Instant::ZERO);
        assert_eq!(b.depart(Instant::ZERO, 437), Some(Instant::ZERO));
        // Empty bucket: 437 B × 8 / 50 000 bit/s = 69.92 ms.
        assert_eq!(
            b.depart(Instant::ZERO, 437),
            Some(Instant::from_nanos(69_920_000))
        );
        // 100 B of tokens after 16 ms; a 300-byte packet waits for 200 B = 32 ms more.
        let c = TbfConfig::with_limit(RATE, 1000, 10_000);
        let mut b = TokenBucket::new(&c, Instant::ZERO);
        assert_eq!(b.depart(Instant::ZERO, 1000), Some(Instant::ZERO));
        let t = Instant::from_millis(16);
        assert_eq!(b.tokens_at(t), 100);
        assert_eq!(b.depart(t, 300), Some(Instant::from_millis(48)));
        // A deficit that is not a whole number of nanoseconds rounds up; the surplus stays.
        let c = TbfConfig::with_limit(3, 10, 10);
        let mut b = TokenBucket::new(&c, Instant::ZERO);
        assert_eq!(b.depart(Instant::ZERO, 10), Some(Instant::ZERO));
        // 8 bits at 3 bit/s = 2.666… s → 2 666 666 667 ns.
        assert_eq!(
            b.depart(Instant::ZERO, 1),
            Some(Instant::from_nanos(2_666_666_667))
        );
        assert_eq!(
            b.depart(Instant::ZERO, 1),
            Some(Instant::from_nanos(5_333_333_334))
        );
        assert_eq!(
            b.depart(Instant::ZERO, 1),
            Some(Instant::from_nanos(8_000_000_000))
        );
    }

    #[test]
    fn tokens_stop_at_the_bucket_size() {
        let c = TbfConfig::with_limit(RATE, 1000, 10_000);
        let mut b = TokenBucket::new(&c, Instant::ZERO);
        assert_eq!(b.depart(Instant::ZERO, 1000), Some(Instant::ZERO));
        // An hour idle refills 1000 B, not 22.5 MB.
        let later = Instant::from_secs(3600);
        assert_eq!(b.tokens_at(later), 1000);
        assert_eq!(b.depart(later, 1000), Some(later));
        assert_eq!(
            b.depart(later, 1000),
            Some(later + Duration::from_millis(160))
        );
    }

    #[test]
    fn a_packet_larger_than_the_bucket_never_leaves() {
        let c = TbfConfig::with_limit(RATE, 1000, 10_000);
        let b = TokenBucket::new(&c, Instant::ZERO);
        assert_eq!(b.ready_at(Instant::ZERO, 1001), None);
        assert!(b.ready_at(Instant::ZERO, 1000).is_some());
        let mut p = c;
        p.peak = Some(TbfPeak {
            rate_bps: 100_000,
            mtu_bytes: 600,
        });
        assert_eq!(p.max_size(), 600);
        assert_eq!(
            TokenBucket::new(&p, Instant::ZERO).ready_at(Instant::ZERO, 601),
            None
        );
    }

    #[test]
    fn the_peak_bucket_spaces_a_burst_at_the_peak_rate() {
        let mut c = TbfConfig::with_limit(RATE, 4000, 10_000);
        c.peak = Some(TbfPeak {
            rate_bps: 100_000,
            mtu_bytes: 500,
        });
        let mut b = TokenBucket::new(&c, Instant::ZERO);
        // 500 B at 100 kbit/s = 40 ms apart while the main bucket lasts.
        let times: Vec<u64> = (0..4)
            .map(|_| b.depart(Instant::ZERO, 500).map_or(0, |t| t.as_nanos()))
            .collect();
        assert_eq!(times, vec![0, 40_000_000, 80_000_000, 120_000_000]);
    }

    #[test]
    fn latency_becomes_a_limit_as_tc_computes_it() {
        // 6.25 kB/s × 50 ms = 312.5 B → 312, + burst.
        let c = TbfConfig::with_latency(RATE, 4096, Duration::from_millis(50));
        assert_eq!(c.limit_bytes, 312 + 4096);
        // tc-tbf(8)'s example: rate 0.5mbit burst 5kb latency 70ms peakrate 1mbit
        // minburst 1540 → min(62 500 × 0.07 + 5120, 125 000 × 0.07 + 1540).
        let mut e = TbfConfig::with_limit(500_000, 5120, 0);
        e.peak = Some(TbfPeak {
            rate_bps: 1_000_000,
            mtu_bytes: 1540,
        });
        assert_eq!(e.limit_for_latency(Duration::from_millis(70)), 9495);
        assert_eq!(TbfConfig::min_burst_for_hz(RATE, 100), 63);
        assert_eq!(TbfConfig::min_burst_for_hz(10_000_000, 100), 12_500);
    }

    #[test]
    fn a_million_packets_leave_at_exactly_the_rate() {
        // Backlogged 437-byte packets at 6.25 kB/s: after the first bucketful, packet k
        // leaves when k × 437 − burst bytes of tokens have accrued, to the nanosecond.
        let c = TbfConfig::with_limit(RATE, 1500, u64::MAX);
        let mut b = TokenBucket::new(&c, Instant::ZERO);
        let n: u64 = 1_000_000;
        let mut last = Instant::ZERO;
        for k in 1..=n {
            last = b.depart(last, 437).expect("fits");
            let owed = (k * 437).saturating_sub(1500);
            let exact = u128::from(owed) * UNITS_PER_BYTE;
            let want = u64::try_from(exact.div_ceil(u128::from(RATE))).unwrap_or(0);
            if k % 99_991 == 0 || k == n {
                assert_eq!(last.as_nanos(), want, "packet {k}");
            }
        }
        let rate = (n * 437 - 1500) as f64 * 8.0 / (last.as_nanos() as f64 / 1e9);
        assert!((rate - RATE as f64).abs() < 1e-6, "{rate}");
    }
}
