//! A point-to-point link: two independent directions (see [`Link`]) between side A and
//! side B. Each side is usually one node; several nodes on one side share that side's
//! queue and serialiser, which is how [`super::Dumbbell`] models a bottleneck.

use covey_proto::Instant;

use super::framing::Fragmentation;
use super::link::{Link, LinkConfig};
use super::{Delivery, Medium, MediumStats, NodeId, Packet};
use crate::sim::{stream_rng, Stream};

/// Two link directions and the rule that picks one per packet.
#[derive(Debug)]
pub struct PointToPoint {
    a_to_b: Link,
    b_to_a: Link,
    on_side_b: Vec<bool>,
    total: MediumStats,
}

impl PointToPoint {
    /// A link between nodes `a` and `b`: `a_to_b` and `b_to_a` configure the directions;
    /// the random streams come from `run_seed` and `link_id` (distinct per link in a run).
    pub fn new(
        a: NodeId,
        b: NodeId,
        a_to_b: LinkConfig,
        b_to_a: LinkConfig,
        run_seed: u64,
        link_id: u64,
    ) -> PointToPoint {
        PointToPoint::between(&[a], &[b], a_to_b, b_to_a, run_seed, link_id)
    }

    /// A link between the nodes of `side_a` and those of `side_b`; packets from side B go
    /// B→A, every other packet goes A→B.
    pub fn between(
        side_a: &[NodeId],
        side_b: &[NodeId],
        a_to_b: LinkConfig,
        b_to_a: LinkConfig,
        run_seed: u64,
        link_id: u64,
    ) -> PointToPoint {
        let max = side_a.iter().chain(side_b).copied().max().unwrap_or(0);
        let mut on_side_b = vec![false; max + 1];
        for &n in side_b {
            on_side_b[n] = true;
        }
        // Four streams per link: loss and delay for each direction.
        let rng = |k: u64| stream_rng(run_seed, Stream::Link(link_id * 4 + k));
        PointToPoint {
            a_to_b: Link::new(a_to_b, side_b.to_vec(), rng(0), rng(1)),
            b_to_a: Link::new(b_to_a, side_a.to_vec(), rng(2), rng(3)),
            on_side_b,
            total: MediumStats::default(),
        }
    }

    /// Sets how both directions fragment and queue datagrams over the MTU (see
    /// [`Link::set_fragmentation`]); [`Fragmentation::Lowpan`] unless set.
    pub fn set_fragmentation(&mut self, fragmentation: Fragmentation) {
        self.a_to_b.set_fragmentation(fragmentation);
        self.b_to_a.set_fragmentation(fragmentation);
    }

    /// The A→B direction.
    pub fn a_to_b(&self) -> &Link {
        &self.a_to_b
    }

    /// The B→A direction.
    pub fn b_to_a(&self) -> &Link {
        &self.b_to_a
    }

    /// Serialisation completions and arrivals processed in both directions.
    pub fn events(&self) -> u64 {
        self.a_to_b.events() + self.b_to_a.events()
    }

    fn refresh_stats(&mut self) {
        let (x, y) = (self.a_to_b.stats(), self.b_to_a.stats());
        let t = &mut self.total;
        t.packets_sent = x.packets_sent + y.packets_sent;
        t.packets_delivered = x.packets_delivered + y.packets_delivered;
        t.bytes_on_wire = x.bytes_on_wire + y.bytes_on_wire;
        t.frames_on_wire = x.frames_on_wire + y.frames_on_wire;
        t.losses.clear();
        for &(cause, n) in x.losses.iter().chain(&y.losses) {
            match t.losses.iter_mut().find(|(c, _)| *c == cause) {
                Some((_, m)) => *m += n,
                None => t.losses.push((cause, n)),
            }
        }
    }
}

impl Medium for PointToPoint {
    fn send(&mut self, now: Instant, packet: Packet) {
        if self.on_side_b.get(packet.from).copied().unwrap_or(false) {
            self.b_to_a.send(now, packet);
        } else {
            self.a_to_b.send(now, packet);
        }
        self.refresh_stats();
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match (self.a_to_b.next_event(), self.b_to_a.next_event()) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.a_to_b.advance(now);
        self.b_to_a.advance(now);
        self.refresh_stats();
    }

    fn poll_delivery(&mut self) -> Option<Delivery> {
        // Merge the two directions' arrivals in time order.
        let x = self.a_to_b.peek_delivery().map(|d| d.at);
        let y = self.b_to_a.peek_delivery().map(|d| d.at);
        match (x, y) {
            (Some(x), Some(y)) if y < x => self.b_to_a.poll_delivery(),
            (Some(_), _) => self.a_to_b.poll_delivery(),
            (None, _) => self.b_to_a.poll_delivery(),
        }
    }

    fn stats(&self) -> &MediumStats {
        &self.total
    }

    fn poll_released(&mut self) -> Option<u64> {
        self.a_to_b
            .poll_released()
            .or_else(|| self.b_to_a.poll_released())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::{
        Destination, Framing, HeaderModel, LossCause, LossSpec, PropagationDelay, QdiscOrder,
        RateLimit, TbfConfig,
    };
    use covey_proto::Duration;

    fn config(rate_bps: u64, queue: usize, loss: LossSpec) -> LinkConfig {
        LinkConfig {
            rate_bps,
            delay: PropagationDelay::Fixed(Duration::from_millis(20)),
            framing: Framing {
                mtu: 128,
                header: HeaderModel::Ipv6Udp,
            },
            queue_packets: queue,
            loss,
            rate_limit: RateLimit::Serialiser,
        }
    }

    fn packet(id: u64, from: NodeId, to: NodeId, payload_bytes: usize) -> Packet {
        Packet {
            id,
            from,
            to: Destination::Node(to),
            payload_bytes,
        }
    }

    /// Runs the medium until idle, returning every delivery and every released id.
    fn drain(m: &mut PointToPoint) -> (Vec<Delivery>, Vec<u64>) {
        let (mut delivered, mut released) = (Vec::new(), Vec::new());
        while let Some(t) = m.poll_timeout() {
            m.handle_timeout(t);
            delivered.extend(std::iter::from_fn(|| m.poll_delivery()));
            released.extend(std::iter::from_fn(|| m.poll_released()));
        }
        released.extend(std::iter::from_fn(|| m.poll_released()));
        (delivered, released)
    }

    #[test]
    fn one_packet_takes_serialisation_plus_propagation() {
        let c = config(20_000, 10, LossSpec::None);
        let mut m = PointToPoint::new(0, 1, c, c, 1, 0);
        // 32 B of CoAP + 48 B IPv6/UDP = 80 B = 640 bit = 32 ms at 20 kbit/s, + 20 ms.
        m.send(Instant::ZERO, packet(7, 0, 1, 32));
        let (d, released) = drain(&mut m);
        assert_eq!(
            d,
            vec![Delivery {
                id: 7,
                to: 1,
                at: Instant::from_millis(52)
            }]
        );
        assert_eq!(released, vec![7]);
        assert_eq!(m.stats().bytes_on_wire, 80);
    }

    #[test]
    fn measured_throughput_equals_the_rate() {
        let c = config(20_000, 10_000, LossSpec::None);
        let mut m = PointToPoint::new(0, 1, c, c, 1, 0);
        let n = 1000;
        for i in 0..n {
            m.send(Instant::ZERO, packet(i, 0, 1, 52)); // 100 B frames
        }
        let (d, _) = drain(&mut m);
        assert_eq!(d.len(), n as usize);
        let first = d.first().map(|x| x.at).unwrap_or_default();
        let last = d.last().map(|x| x.at).unwrap_or_default();
        let bits = (n - 1) as f64 * 100.0 * 8.0;
        let rate = bits / (last - first).as_secs_f64();
        assert!((rate - 20_000.0).abs() < 1.0, "measured {rate} bit/s");
        assert!(d.windows(2).all(|w| w[0].at <= w[1].at), "FIFO order");
    }

    #[test]
    fn drop_tail_queue_overflows_by_the_excess() {
        let c = config(20_000, 5, LossSpec::None);
        let mut m = PointToPoint::new(0, 1, c, c, 1, 0);
        for i in 0..20 {
            m.send(Instant::ZERO, packet(i, 0, 1, 20));
        }
        // One in service, five queued, fourteen dropped.
        assert_eq!(m.stats().losses_of(LossCause::QueueFull), 14);
        let (d, released) = drain(&mut m);
        assert_eq!(d.len(), 6);
        assert_eq!(
            d.iter().map(|x| x.id).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4, 5],
            "the tail is dropped"
        );
        assert_eq!(released.len(), 20, "every packet is released once");
        assert_eq!(m.a_to_b().max_queue(), 5);
    }

    #[test]
    fn directions_are_independent() {
        let c = config(20_000, 10, LossSpec::None);
        let mut m = PointToPoint::new(0, 1, c, c, 1, 0);
        m.send(Instant::ZERO, packet(1, 0, 1, 32));
        m.send(Instant::ZERO, packet(2, 1, 0, 32));
        let (d, _) = drain(&mut m);
        assert!(d.iter().all(|x| x.at == Instant::from_millis(52)), "{d:?}");
    }

    #[test]
    fn fragments_are_lost_independently() {
        // 48 + 300 B = 348 B -> 3 fragments; a packet survives only if all three do.
        let p = 0.1;
        let c = config(1_000_000_000, 100_000, LossSpec::Bernoulli { p });
        assert_eq!(c.framing.frame_count(300), 3);
        let mut m = PointToPoint::new(0, 1, c, c, 9, 0);
        let n = 50_000u64;
        for i in 0..n {
            m.send(Instant::from_nanos(i * 1000), packet(i, 0, 1, 300));
        }
        let (d, _) = drain(&mut m);
        let delivered = d.len() as f64 / n as f64;
        let expected = (1.0 - p) * (1.0 - p) * (1.0 - p);
        assert!(
            (delivered - expected).abs() < 0.01,
            "{delivered} vs {expected}"
        );
        assert_eq!(m.stats().frames_on_wire, 3 * n);
        assert_eq!(m.stats().losses_of(LossCause::Channel) + d.len() as u64, n);
    }

    /// A tbf link direction as the emulator builds it: whole IP packets, no fragments.
    fn tbf_config(tbf: TbfConfig, delay: PropagationDelay, loss: LossSpec) -> LinkConfig {
        LinkConfig {
            rate_bps: 1,
            delay,
            framing: Framing {
                mtu: 65_535,
                header: HeaderModel::Included,
            },
            queue_packets: 0,
            loss,
            rate_limit: RateLimit::TokenBucket(tbf),
        }
    }

    /// 437-byte IP packets (409 B of JSON over UDP/IPv4) on a gigabit line: 3496 ns each.
    const LINE_NS: u64 = 3496;

    #[test]
    fn tbf_sends_a_burst_within_the_bucket_at_line_speed() {
        // Seed 004's low-quality cap, 6.25 kB/s, with a 4096-byte bucket behind netem's
        // 20 ms: nine packets (3933 B) leave back to back; the tenth waits for the 274 B it
        // lacks, 274 × 8 / 50 000 s = 43.84 ms. A serialiser would space all ten 69.92 ms.
        let tbf = TbfConfig::with_latency(50_000, 4096, Duration::from_millis(50));
        let c = tbf_config(
            tbf,
            PropagationDelay::Fixed(Duration::from_millis(20)),
            LossSpec::None,
        );
        let mut m = PointToPoint::new(0, 1, c, c, 1, 0);
        for i in 0..10 {
            m.send(Instant::ZERO, packet(i, 0, 1, 437));
        }
        let (d, released) = drain(&mut m);
        let at: Vec<u64> = d.iter().map(|x| x.at.as_nanos()).collect();
        let mut want: Vec<u64> = (1..=9).map(|k| 20_000_000 + k * LINE_NS).collect();
        want.push(20_000_000 + 43_840_000 + LINE_NS);
        assert_eq!(at, want);
        assert_eq!(released.len(), 10);
        assert_eq!(m.stats().bytes_on_wire, 4370);
    }

    #[test]
    fn tbf_drops_what_would_wait_beyond_its_limit() {
        // Bucket 1000 B, limit 2000 B: two 500-byte packets leave on the bucket, four wait
        // (2000 B), the other four find the backlog full; a 1001-byte packet can never
        // gather enough tokens and is dropped as too large.
        let tbf = TbfConfig::with_limit(50_000, 1000, 2000);
        let c = tbf_config(tbf, PropagationDelay::Fixed(Duration::ZERO), LossSpec::None);
        let mut m = PointToPoint::new(0, 1, c, c, 1, 0);
        for i in 0..10 {
            m.send(Instant::ZERO, packet(i, 0, 1, 500));
        }
        m.send(Instant::ZERO, packet(10, 0, 1, 1001));
        // netem (zero delay here) hands them to the shaper when the link next runs.
        let (d, released) = drain(&mut m);
        assert_eq!(m.stats().losses_of(LossCause::QueueFull), 4);
        assert_eq!(m.stats().losses_of(LossCause::TooLarge), 1);
        assert_eq!(
            d.iter().map(|x| x.id).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4, 5]
        );
        // Waiting packets leave every 500 × 8 / 50 000 s = 80 ms.
        assert_eq!(
            d[5].at,
            Instant::from_millis(320) + Duration::from_nanos(4000)
        );
        assert_eq!(released.len(), 11);
        // A packet leaves the backlog when its tokens are there: of the four waiting from
        // 0 ms (leaving at 80, 160, 240, 320 ms) one has left by 100 ms, so one more fits.
        let mut m = PointToPoint::new(0, 1, c, c, 1, 0);
        for i in 0..6 {
            m.send(Instant::ZERO, packet(i, 0, 1, 500));
        }
        m.handle_timeout(Instant::from_millis(100));
        m.send(Instant::from_millis(100), packet(6, 0, 1, 500));
        m.send(Instant::from_millis(100), packet(7, 0, 1, 500));
        m.handle_timeout(Instant::from_millis(100));
        assert_eq!(m.stats().losses_of(LossCause::QueueFull), 1);
    }

    #[test]
    fn tbf_holds_a_million_packets_to_the_rate_exactly() {
        let tbf = TbfConfig::with_limit(50_000, 1500, u64::MAX);
        let c = tbf_config(tbf, PropagationDelay::Fixed(Duration::ZERO), LossSpec::None);
        let mut m = PointToPoint::new(0, 1, c, c, 1, 0);
        let n: u64 = 1_000_000;
        for i in 0..n {
            m.send(Instant::ZERO, packet(i, 0, 1, 437));
        }
        let mut count = 0u64;
        let mut last = Instant::ZERO;
        while let Some(t) = m.poll_timeout() {
            m.handle_timeout(t);
            while let Some(x) = m.poll_delivery() {
                count += 1;
                last = x.at;
            }
            while m.poll_released().is_some() {}
        }
        assert_eq!(count, n);
        // The last packet has its tokens once n × 437 − 1500 bytes' worth have arrived.
        let owed = u128::from(n * 437 - 1500) * 8_000_000_000;
        let tokens = u64::try_from(owed.div_ceil(50_000)).unwrap_or(0);
        assert_eq!(last.as_nanos(), tokens + LINE_NS);
    }

    #[test]
    fn tbf_composes_with_the_papers_jitter_in_either_order() {
        // Seed 004's low-quality point: 100 ms ± 20 % uniform, 6.25 kB/s, 4 messages/s.
        // The bucket refills 1562 B between messages, so shaping adds nothing: one-way
        // delay is the jitter alone (plus the line), never the 69.92 ms a serialiser adds.
        for order in [QdiscOrder::NetemThenTbf, QdiscOrder::TbfThenNetem] {
            let mut tbf = TbfConfig::with_latency(50_000, 4096, Duration::from_millis(50));
            tbf.order = order;
            let jitter = PropagationDelay::Uniform {
                min: Duration::from_millis(80),
                max: Duration::from_millis(120),
            };
            let c = tbf_config(tbf, jitter, LossSpec::None);
            let mut m = PointToPoint::new(0, 1, c, c, 5, 0);
            let n = 2000u64;
            for i in 0..n {
                m.send(Instant::from_millis(i * 250), packet(i, 0, 1, 437));
            }
            let (d, _) = drain(&mut m);
            assert_eq!(d.len() as u64, n);
            let delays: Vec<u64> = d
                .iter()
                .map(|x| x.at.as_nanos() - x.id * 250_000_000 - LINE_NS)
                .collect();
            let lo = delays.iter().min().copied().unwrap_or(0);
            let hi = delays.iter().max().copied().unwrap_or(0);
            assert!(
                lo >= 80_000_000 && hi <= 120_000_000,
                "{order:?}: {lo}..{hi}"
            );
            let mean = delays.iter().sum::<u64>() as f64 / n as f64 / 1e6;
            assert!((mean - 100.0).abs() < 1.0, "{order:?}: mean {mean} ms");
        }
    }

    #[test]
    fn tbf_order_decides_whether_lost_packets_spend_tokens() {
        // netem first: a packet netem loses never reaches the shaper. tbf first: every
        // packet is shaped and goes on the wire, then half are lost after it.
        let wire = |order| {
            let mut tbf = TbfConfig::with_limit(50_000, 437, u64::MAX);
            tbf.order = order;
            let c = tbf_config(
                tbf,
                PropagationDelay::Fixed(Duration::from_millis(10)),
                LossSpec::Bernoulli { p: 0.5 },
            );
            let mut m = PointToPoint::new(0, 1, c, c, 3, 0);
            for i in 0..1000 {
                m.send(Instant::ZERO, packet(i, 0, 1, 437));
            }
            let (d, released) = drain(&mut m);
            assert_eq!(released.len(), 1000);
            let last = d.last().map_or(0, |x| x.at.as_nanos());
            (m.stats().bytes_on_wire, d.len() as u64, last)
        };
        let (netem_first, delivered, last) = wire(QdiscOrder::NetemThenTbf);
        assert_eq!(netem_first, 437 * delivered);
        // The survivors alone are shaped: the last leaves (delivered − 1) × 69.92 ms on.
        assert_eq!(last, 10_000_000 + (delivered - 1) * 69_920_000 + LINE_NS);
        let (tbf_first, _, _) = wire(QdiscOrder::TbfThenNetem);
        assert_eq!(tbf_first, 437 * 1000);
    }

    #[test]
    fn jitter_bounds_every_arrival() {
        let mut c = config(1_000_000_000, 100, LossSpec::None);
        c.delay = PropagationDelay::Uniform {
            min: Duration::from_millis(10),
            max: Duration::from_millis(30),
        };
        let serialisation = c.serialisation(58);
        let mut m = PointToPoint::new(0, 1, c, c, 3, 0);
        let mut delays = Vec::new();
        for i in 0..5000u64 {
            let at = Instant::from_millis(i * 50);
            m.send(at, packet(i, 0, 1, 10));
            let (d, _) = drain(&mut m);
            delays.extend(d.iter().map(|x| x.at - at - serialisation));
        }
        assert_eq!(delays.len(), 5000);
        let lo = delays.iter().min().copied().unwrap_or_default();
        let hi = delays.iter().max().copied().unwrap_or_default();
        assert!(lo >= Duration::from_millis(10) && hi <= Duration::from_millis(30));
        assert!(lo < Duration::from_millis(11) && hi > Duration::from_millis(29));
    }
}
