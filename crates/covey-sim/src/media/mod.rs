//! Link and medium models. Each is sans-IO like the engine: packets go in with `send`, the
//! simulator asks `poll_timeout` when the medium next needs the clock, calls `handle_timeout`
//! then, and pulls what arrived with `poll_delivery`.

pub mod contiki;
pub mod delay;
pub mod dumbbell;
pub mod fading;
pub mod framing;
pub mod ieee802154;
pub mod interference;
pub mod link;
pub mod loss;
pub mod point_to_point;
pub mod radio_islands;
pub mod tbf;

pub use delay::PropagationDelay;
pub use dumbbell::Dumbbell;
pub use framing::{Fragmentation, Framing, HeaderModel};
pub use link::{Link, LinkConfig, RateLimit};
pub use loss::{Bernoulli, GilbertElliott, LossModel, LossSpec};
pub use point_to_point::PointToPoint;
pub use radio_islands::{RadioIslands, WireConfig};
pub use tbf::{QdiscOrder, TbfConfig, TbfPeak, TokenBucket};

use covey_proto::Instant;

/// A simulated node, dense from 0.
pub type NodeId = usize;

/// Where a packet goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destination {
    /// One node.
    Node(NodeId),
    /// Every node in range of the sender (link-layer broadcast, used for multicast).
    Broadcast,
}

/// A packet handed to a medium: the simulator keeps its bytes under `id`; the medium only
/// needs its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// The simulator's handle for the packet's bytes.
    pub id: u64,
    /// The sending node.
    pub from: NodeId,
    /// The receiver(s).
    pub to: Destination,
    /// Size of the UDP payload (the CoAP datagram) in bytes; each medium adds the header
    /// bytes of its header model.
    pub payload_bytes: usize,
}

/// A packet that reached a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// The packet's handle.
    pub id: u64,
    /// The node it reached.
    pub to: NodeId,
    /// When it arrived (the last bit of its last fragment).
    pub at: Instant,
}

/// Why a medium lost a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LossCause {
    /// A drop-tail or MAC queue was full.
    QueueFull,
    /// The loss model dropped it (bit errors, fading, interference).
    Channel,
    /// Two or more transmissions overlapped at the receiver.
    Collision,
    /// CSMA/CA found the channel busy macMaxCSMABackoffs + 1 times.
    ChannelAccessFailure,
    /// No link-layer ACK after the MAC's retries.
    RetriesExhausted,
    /// The packet is larger than the medium can carry, even fragmented.
    TooLarge,
}

/// Counters every medium keeps.
#[derive(Debug, Clone, Default)]
pub struct MediumStats {
    /// Packets handed to `send`.
    pub packets_sent: u64,
    /// Packets delivered (per receiver).
    pub packets_delivered: u64,
    /// Bytes put on the air or wire, headers, fragments and retries included.
    pub bytes_on_wire: u64,
    /// Frames (or fragments) put on the air or wire, retries included.
    pub frames_on_wire: u64,
    /// Packets lost, by cause.
    pub losses: Vec<(LossCause, u64)>,
}

impl MediumStats {
    /// Adds one loss of `cause`.
    pub fn lose(&mut self, cause: LossCause) {
        match self.losses.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, n)) => *n += 1,
            None => self.losses.push((cause, 1)),
        }
    }

    /// Losses counted for `cause`.
    pub fn losses_of(&self, cause: LossCause) -> u64 {
        self.losses
            .iter()
            .find(|(c, _)| *c == cause)
            .map_or(0, |(_, n)| *n)
    }
}

/// A network medium on virtual time.
pub trait Medium {
    /// Hands `packet` to the medium at `now`; it may be lost (counted in the stats).
    fn send(&mut self, now: Instant, packet: Packet);
    /// When `handle_timeout` must be called next.
    fn poll_timeout(&self) -> Option<Instant>;
    /// Advances the medium to `now`: serialisation, backoffs, ACKs, propagation.
    fn handle_timeout(&mut self, now: Instant);
    /// The next packet that arrived, in arrival order.
    fn poll_delivery(&mut self) -> Option<Delivery>;
    /// Counters.
    fn stats(&self) -> &MediumStats;
    /// The id of a packet the medium is done with (delivered to, or lost for, every
    /// receiver), so the simulator can free its bytes. Media that never report keep every
    /// packet's bytes until the run ends.
    fn poll_released(&mut self) -> Option<u64> {
        None
    }
}
