//! The simulator side: the clients on one side of a point-to-point link, the server on the
//! other, the link's directions the same model the emulator runs.

use covey_proto::Instant;
use covey_sim::media::PointToPoint;
use covey_sim::sim::{node_addr, Lone, Simulator};

use super::peer::Peer;
use super::{Completion, CrossCheck};

/// The server is node 0; clients are 1..=N.
const SERVER: usize = 0;

/// Runs the scenario on virtual time and summarises the clients' completion times.
pub fn simulate(check: &CrossCheck) -> Completion {
    let clients: Vec<usize> = (1..=check.clients).collect();
    let link = check.link();
    let medium = PointToPoint::between(&clients, &[SERVER], link, link, check.seed, 0);
    let mut sim: Simulator<_, Lone<Peer>> = Simulator::new(medium, check.seed);
    sim.add_node(covey_sim::paper_config(), Lone(Peer::server()))
        .expect("the cross-check configuration is valid");
    let measure_from = Instant::ZERO + check.warmup;
    let stop_at = measure_from + check.duration;
    for _ in &clients {
        sim.add_node(
            covey_sim::paper_config(),
            Lone(Peer::client(node_addr(SERVER), measure_from, stop_at)),
        )
        .expect("the cross-check configuration is valid");
    }
    // Requests sent before the stop may still be retransmitted after it.
    sim.run_to(stop_at + check.duration);
    let mut times = Vec::new();
    let mut retransmissions = 0;
    for node in &sim.nodes()[1..] {
        times.extend_from_slice(&node.app().0.completion_s);
        retransmissions += node.stats().retransmissions.iter().sum::<u64>();
    }
    Completion::of(&mut times, retransmissions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use covey_proto::Duration;

    #[test]
    fn most_requests_take_one_round_trip_and_losses_cost_a_retransmission_timeout() {
        let check = CrossCheck {
            duration: Duration::from_secs(60),
            ..CrossCheck::default()
        };
        let c = simulate(&check);
        // Round trip: 2 × 50 ms plus serialising two ~60-byte packets at 1 Mbit/s.
        assert!(c.p50_s > 0.100 && c.p50_s < 0.102, "median {}", c.p50_s);
        // About 1 − 0.95² ≈ 10 % of requests lose a packet and wait ACK_TIMEOUT (2–3 s).
        assert!(
            c.p90_s < 0.2 && c.p99_s > 2.0,
            "p90 {} p99 {}",
            c.p90_s,
            c.p99_s
        );
        assert!(c.retransmissions > c.completed / 20, "{c:?}");
        // 10 clients × 60 s at a mean of 0.9 × 0.1 s + 0.1 × (2.5 s + 0.1 s) ≈ 0.35 s.
        assert!(c.mean_s > 0.25 && c.mean_s < 0.5, "{c:?}");
        assert!(c.completed > 1200 && c.completed < 2400, "{c:?}");
    }
}
