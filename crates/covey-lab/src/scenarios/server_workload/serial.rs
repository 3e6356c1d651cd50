//! The testbed's 6LoWPAN base station (paper 002 §5, Figure 5): the client runs on a PC and
//! every request and response crosses the USB serial line to the base station mote, one
//! packet at a time, before or after the radio hop.
//!
//! The line is covey-sim's [`SlipLine`]: 10 bit times per byte (8N1) at 115 200 baud, which
//! the paper does not give and is assumed (the usual UART rate of a TelosB base station).
//! On the line a packet is the uncompressed IPv6 (40) and UDP (8) headers before the CoAP
//! message (6LoWPAN compression happens on the radio side) between two frame delimiters;
//! the paper does not say how its base station frames packets, so nothing more is counted.
//! Packets wait on the PC for the line (the PC's buffers are large); the base station's radio
//! queue is the medium's MAC queue, so [`SlipLine`]'s own two-packet buffer (Contiki's
//! `slip.c`) is not used. Upwards the mote holds at most `up_capacity` packets waiting for or
//! on the line (the paper gives no size) and drops a response that finds them all taken.

use std::collections::{HashMap, VecDeque};

use covey_proto::Instant;
use covey_sim::media::contiki::{SlipConfig, SlipLine};
use covey_sim::media::ieee802154::Ieee802154Medium;
use covey_sim::media::{Delivery, Medium, MediumStats, NodeId, Packet};

/// The serial line's constants: 115 200 baud, 8N1, IPv6 + UDP headers uncompressed.
pub fn line_config() -> SlipConfig {
    SlipConfig {
        baud: 115_200,
        bits_per_byte: 10,
        buffered_packets: usize::MAX,
        header_bytes: 48,
    }
}

/// The radio medium with, optionally, the PC's serial line in front of one node's radio.
#[derive(Debug)]
pub struct SerialBaseStation {
    inner: Ieee802154Medium,
    /// The base station's node (the PC's packets enter the radio there).
    station: NodeId,
    line: Option<SlipLine>,
    now: Instant,
    /// PC to base station: packets and when their last byte reaches the mote.
    down: VecDeque<(Instant, Packet)>,
    /// Base station to PC: deliveries and when the PC has them.
    up: VecDeque<Delivery>,
    /// UDP payload bytes of every packet the line may yet carry up.
    sizes: HashMap<u64, usize>,
    /// Packets the base station holds for the PC at most.
    up_capacity: usize,
    /// Packets the base station dropped because `up_capacity` were waiting for the line.
    pub up_drops: u64,
}

impl SerialBaseStation {
    /// `inner` with a serial line in front of `station` when `line` is given; the station
    /// holds at most `up_capacity` packets for the PC.
    pub fn new(
        inner: Ieee802154Medium,
        station: NodeId,
        line: Option<SlipConfig>,
        up_capacity: usize,
    ) -> Self {
        SerialBaseStation {
            inner,
            station,
            line: line.map(SlipLine::new),
            now: Instant::ZERO,
            down: VecDeque::new(),
            up: VecDeque::new(),
            sizes: HashMap::new(),
            up_capacity,
            up_drops: 0,
        }
    }

    /// The radio medium.
    pub fn radio(&self) -> &Ieee802154Medium {
        &self.inner
    }

    /// Moves the radio's deliveries to the station onto the up line.
    fn pull_radio(&mut self) -> Option<Delivery> {
        while let Some(d) = self.inner.poll_delivery() {
            let Some(line) = self.line.as_mut().filter(|_| d.to == self.station) else {
                self.sizes.remove(&d.id);
                return Some(d);
            };
            let size = self.sizes.remove(&d.id).unwrap_or(0);
            // Deliveries already due are handed out before the next medium step, so every
            // packet in `up` is still at the station.
            if self.up.len() >= self.up_capacity {
                self.up_drops += 1;
                continue;
            }
            let at = line.router_to_host(d.at, size);
            self.up.push_back(Delivery { at, ..d });
        }
        None
    }
}

impl Medium for SerialBaseStation {
    fn send(&mut self, now: Instant, packet: Packet) {
        self.now = now;
        let Some(line) = self.line.as_mut() else {
            return self.inner.send(now, packet);
        };
        self.sizes.insert(packet.id, packet.payload_bytes);
        if packet.from == self.station {
            let at = line.host_to_router(now, packet.payload_bytes);
            self.down.push_back((at, packet));
        } else {
            self.inner.send(now, packet);
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        [
            self.inner.poll_timeout(),
            self.down.front().map(|d| d.0),
            self.up.front().map(|d| d.at),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        while let Some(&(at, packet)) = self.down.front() {
            if at > now {
                break;
            }
            self.down.pop_front();
            self.inner.send(now, packet);
        }
        self.inner.handle_timeout(now);
    }

    fn poll_delivery(&mut self) -> Option<Delivery> {
        if let Some(d) = self.pull_radio() {
            return Some(d);
        }
        if self.up.front().is_some_and(|d| d.at <= self.now) {
            return self.up.pop_front();
        }
        None
    }

    fn stats(&self) -> &MediumStats {
        self.inner.stats()
    }

    fn poll_released(&mut self) -> Option<u64> {
        // With a line, a packet the radio is done with may still be on its way up, and the
        // simulator must keep its bytes: nothing is released until the run ends.
        if self.line.is_some() {
            return None;
        }
        self.inner.poll_released()
    }
}
