//! The "N clients -> router -> bottleneck -> server" topology.
//!
//! The clients' access links are ideal (they share the host or LAN in front of the router,
//! as the emulated clients of the cc-bottleneck paper did), so every client packet enters
//! the router's drop-tail queue of the upstream bottleneck direction the moment it is sent;
//! the server's packets share the downstream direction's queue. Both directions are
//! [`Link`](super::Link)s with the bottleneck's rate, delay, MTU and loss, so the whole
//! topology is a [`PointToPoint`] whose client side holds many nodes.

use super::link::LinkConfig;
use super::point_to_point::PointToPoint;
use super::NodeId;

/// Builds dumbbell topologies.
#[derive(Debug, Clone, Copy)]
pub struct Dumbbell;

impl Dumbbell {
    /// The medium joining `clients` to `server` through one bottleneck whose two
    /// directions are both configured by `bottleneck`.
    pub fn build(
        clients: &[NodeId],
        server: NodeId,
        bottleneck: LinkConfig,
        run_seed: u64,
    ) -> PointToPoint {
        PointToPoint::between(clients, &[server], bottleneck, bottleneck, run_seed, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::{
        Delivery, Destination, Framing, HeaderModel, LossSpec, Medium, Packet, PropagationDelay,
        RateLimit,
    };
    use covey_proto::{Duration, Instant};

    #[test]
    fn clients_share_the_bottleneck_queue_and_the_server_reaches_each_client() {
        let c = LinkConfig {
            rate_bps: 20_000,
            delay: PropagationDelay::Fixed(Duration::from_millis(20)),
            framing: Framing {
                mtu: 128,
                header: HeaderModel::Ipv6Udp,
            },
            queue_packets: 100,
            loss: LossSpec::None,
            rate_limit: RateLimit::Serialiser,
        };
        let clients = [1, 2, 3, 4];
        let mut m = Dumbbell::build(&clients, 0, c, 5);
        for (i, &n) in clients.iter().enumerate() {
            m.send(
                Instant::ZERO,
                Packet {
                    id: i as u64,
                    from: n,
                    to: Destination::Node(0),
                    payload_bytes: 32,
                },
            );
        }
        m.send(
            Instant::ZERO,
            Packet {
                id: 9,
                from: 0,
                to: Destination::Node(3),
                payload_bytes: 32,
            },
        );
        let mut d: Vec<Delivery> = Vec::new();
        while let Some(t) = m.poll_timeout() {
            m.handle_timeout(t);
            d.extend(std::iter::from_fn(|| m.poll_delivery()));
        }
        // Upstream: four 80-byte packets back to back (32 ms each), then 20 ms.
        let up: Vec<u64> = d
            .iter()
            .filter(|x| x.to == 0)
            .map(|x| x.at.as_nanos() / 1_000_000)
            .collect();
        assert_eq!(up, vec![52, 84, 116, 148]);
        let down: Vec<_> = d.iter().filter(|x| x.to != 0).collect();
        assert_eq!(down.len(), 1);
        assert_eq!((down[0].to, down[0].at), (3, Instant::from_millis(52)));
    }

    #[test]
    fn a_broadcast_from_the_server_reaches_every_client_once() {
        let c = LinkConfig {
            rate_bps: 250_000,
            delay: PropagationDelay::Fixed(Duration::from_millis(1)),
            framing: Framing {
                mtu: 127,
                header: HeaderModel::SixLowpanIphcNhc,
            },
            queue_packets: 10,
            loss: LossSpec::None,
            rate_limit: RateLimit::Serialiser,
        };
        let mut m = Dumbbell::build(&[1, 2, 3], 0, c, 1);
        m.send(
            Instant::ZERO,
            Packet {
                id: 4,
                from: 0,
                to: Destination::Broadcast,
                payload_bytes: 20,
            },
        );
        let (mut to, mut released) = (Vec::new(), Vec::new());
        while let Some(t) = m.poll_timeout() {
            m.handle_timeout(t);
            to.extend(std::iter::from_fn(|| m.poll_delivery()).map(|d| d.to));
            released.extend(std::iter::from_fn(|| m.poll_released()));
        }
        to.sort_unstable();
        assert_eq!(to, vec![1, 2, 3]);
        assert_eq!(released, vec![4], "released once, after the last receiver");
    }
}
