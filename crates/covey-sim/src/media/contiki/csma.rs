//! Contiki's CSMA MAC (`core/net/mac/csma.c` at the 2 July 2014 master), the layer between
//! 6LoWPAN and nullrdc:
//!
//! - `send_packet()`: every next hop (the broadcast address included) gets its own queue from a
//!   pool of `CSMA_MAX_NEIGHBOR_QUEUES` (`neighbor_memb`); packets come from a pool of
//!   `MAX_QUEUED_PACKETS` = `QUEUEBUF_NUM` (`packet_memb`) shared by all queues. A packet for a
//!   next hop without a queue while every queue is taken, or with the pool empty, is dropped
//!   (`mac_call_sent_callback(..., MAC_TX_ERR, 1)`); only the application's retransmission
//!   repairs it. A packet that is first in its queue is sent at once (`ctimer_set(..., 0, ...)`).
//! - `packet_sent()`: `MAC_TX_OK` and `MAC_TX_NOACK` add to `n->transmissions`,
//!   `MAC_TX_COLLISION` only to `n->collisions`. After a collision or no ACK the packet is sent
//!   again after `time + random_rand() % (2^e · time)` ticks, `time` = `default_timebase()`,
//!   `e` = min(`n->transmissions`, `CSMA_MAX_BACKOFF_EXPONENT`), while `n->transmissions` <
//!   the packet's max transmissions; else it is dropped. A collision therefore never uses up a
//!   transmission.
//! - `free_packet()`: when a packet is done and another waits in the same queue, the next one
//!   goes after `default_timebase()` (125 ms), with the counters reset; an emptied queue is
//!   given back to the pool.
//!
//! The state machine here is pure: the medium schedules the timers it asks for and reports
//! nullrdc's outcome of each send.

use std::collections::VecDeque;

use covey_proto::Duration;
use rand::Rng;

use super::ContikiConfig;
use crate::media::NodeId;

/// A next hop: `None` is the broadcast address (`linkaddr_null`), which gets a queue too.
pub type NeighbourKey = Option<NodeId>;

/// nullrdc's verdict on one send (`mac_call_sent_callback` status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxStatus {
    /// `MAC_TX_OK`: ACKed, or a broadcast that went out.
    Ok,
    /// `MAC_TX_NOACK`: sent, no ACK within nullrdc's wait.
    NoAck,
    /// `MAC_TX_COLLISION`: not sent (receiving, CCA busy) or a foreign frame in place of the ACK.
    Collision,
}

/// Why `send_packet()` refused a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Every one of the `CSMA_MAX_NEIGHBOR_QUEUES` queues belongs to another next hop.
    NoNeighbourQueue,
    /// `packet_memb` (`MAX_QUEUED_PACKETS`) is exhausted.
    NoPacketBuffer,
}

/// A timer the medium must arm: fire `token` after `after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimerRequest {
    /// Delay from now.
    pub after: Duration,
    /// Identifies the timer; a newer request for the same queue cancels it (`ctimer_set`).
    pub token: u64,
}

/// What `packet_sent()` decided.
#[derive(Debug)]
pub enum CsmaDecision<T> {
    /// The head packet goes again when the timer fires.
    Retry(TimerRequest),
    /// The head packet is done: sent (`dropped` false) or given up on; `next` arms the queue's
    /// timer for its next packet, if any.
    Done {
        /// The packet.
        packet: T,
        /// Whether csma.c gave up on it (max transmissions reached).
        dropped: bool,
        /// Transmissions the packet used (`n->transmissions`).
        transmissions: u8,
        /// The timer for the queue's next packet.
        next: Option<TimerRequest>,
    },
}

#[derive(Debug)]
struct Queued<T> {
    packet: T,
    buffers: usize,
}

#[derive(Debug)]
struct NeighbourQueue<T> {
    addr: NeighbourKey,
    transmissions: u8,
    collisions: u32,
    timer: Option<u64>,
    packets: VecDeque<Queued<T>>,
}

/// One node's csma.c state.
#[derive(Debug)]
pub struct ContikiCsma<T> {
    max_queues: usize,
    max_packets: usize,
    max_transmissions: u8,
    max_backoff_exponent: u8,
    timebase_ticks: u32,
    tick: Duration,
    used_packets: usize,
    queues: Vec<NeighbourQueue<T>>,
    next_token: u64,
}

impl<T> ContikiCsma<T> {
    /// A node with `max_packets` packet buffers (`QUEUEBUF_NUM` of its build).
    pub fn new(config: &ContikiConfig, max_packets: usize) -> Self {
        ContikiCsma {
            max_queues: config.max_neighbor_queues,
            max_packets,
            max_transmissions: config.max_mac_transmissions.max(1),
            max_backoff_exponent: config.max_backoff_exponent,
            timebase_ticks: config.timebase_ticks(),
            tick: config.tick(),
            used_packets: 0,
            queues: Vec::new(),
            next_token: 0,
        }
    }

    fn arm(&mut self, index: usize, ticks: u32) -> Option<TimerRequest> {
        self.next_token += 1;
        let token = self.next_token;
        let queue = self.queues.get_mut(index)?;
        queue.timer = Some(token);
        Some(TimerRequest {
            after: self.tick * ticks,
            token,
        })
    }

    /// `send_packet()`: queues `packet` (taking `buffers` queue buffers, one per 6LoWPAN
    /// fragment) for `addr`. `Ok(Some(timer))` when it is first in its queue and goes at once.
    pub fn send_packet(
        &mut self,
        addr: NeighbourKey,
        packet: T,
        buffers: usize,
    ) -> Result<Option<TimerRequest>, (T, Refusal)> {
        let index = match self.queues.iter().position(|q| q.addr == addr) {
            Some(i) => i,
            None if self.queues.len() < self.max_queues => {
                self.queues.push(NeighbourQueue {
                    addr,
                    transmissions: 0,
                    collisions: 0,
                    timer: None,
                    packets: VecDeque::new(),
                });
                self.queues.len() - 1
            }
            None => return Err((packet, Refusal::NoNeighbourQueue)),
        };
        if self.used_packets + buffers > self.max_packets {
            if self.queues.get(index).is_some_and(|q| q.packets.is_empty()) {
                self.queues.remove(index);
            }
            return Err((packet, Refusal::NoPacketBuffer));
        }
        self.used_packets += buffers;
        let Some(queue) = self.queues.get_mut(index) else {
            return Err((packet, Refusal::NoNeighbourQueue));
        };
        queue.packets.push_back(Queued { packet, buffers });
        if queue.packets.len() == 1 {
            Ok(self.arm(index, 0))
        } else {
            Ok(None)
        }
    }

    /// `transmit_packet_list()`: the timer `token` fired; the packet to hand to nullrdc, if the
    /// timer is still armed.
    pub fn timer_fired(&mut self, token: u64) -> Option<(NeighbourKey, &T)> {
        let queue = self.queues.iter_mut().find(|q| q.timer == Some(token))?;
        queue.timer = None;
        let addr = queue.addr;
        queue.packets.front().map(|q| (addr, &q.packet))
    }

    /// `packet_sent()` for the head packet of `addr`'s queue, with nullrdc's `status`.
    pub fn packet_sent(
        &mut self,
        addr: NeighbourKey,
        status: TxStatus,
        rng: &mut impl Rng,
    ) -> Option<CsmaDecision<T>> {
        let index = self.queues.iter().position(|q| q.addr == addr)?;
        let queue = self.queues.get_mut(index)?;
        match status {
            TxStatus::Ok | TxStatus::NoAck => {
                queue.transmissions = queue.transmissions.saturating_add(1);
            }
            TxStatus::Collision => queue.collisions += 1,
        }
        let transmissions = queue.transmissions;
        if status != TxStatus::Ok && transmissions < self.max_transmissions {
            let ticks = self.backoff_ticks(transmissions, rng);
            return self.arm(index, ticks).map(CsmaDecision::Retry);
        }
        let dropped = status != TxStatus::Ok;
        let queue = self.queues.get_mut(index)?;
        let done = queue.packets.pop_front()?;
        self.used_packets = self.used_packets.saturating_sub(done.buffers);
        let next = if queue.packets.is_empty() {
            self.queues.remove(index);
            None
        } else {
            queue.transmissions = 0;
            queue.collisions = 0;
            let timebase = self.timebase_ticks;
            self.arm(index, timebase)
        };
        Some(CsmaDecision::Done {
            packet: done.packet,
            dropped,
            transmissions,
            next,
        })
    }

    /// The retry delay in ticks: `time + random_rand() % (backoff_transmissions * time)`, with
    /// `backoff_transmissions` = 1 << min(transmissions, CSMA_MAX_BACKOFF_EXPONENT).
    pub fn backoff_ticks(&self, transmissions: u8, rng: &mut impl Rng) -> u32 {
        let time = self.timebase_ticks;
        let exponent = u32::from(transmissions.min(self.max_backoff_exponent));
        let window = (1u32 << exponent) * time;
        time + rng.random_range(0..window)
    }

    /// Next hops that hold a queue now.
    pub fn neighbour_queues(&self) -> usize {
        self.queues.len()
    }

    /// Packet buffers in use.
    pub fn buffers_used(&self) -> usize {
        self.used_packets
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn csma() -> ContikiCsma<u32> {
        ContikiCsma::new(&ContikiConfig::default(), 8)
    }

    #[test]
    fn a_third_next_hop_is_refused_while_two_queues_exist() {
        let mut mac = csma();
        assert!(mac.send_packet(Some(1), 1, 1).unwrap().is_some());
        assert!(mac.send_packet(Some(2), 2, 1).unwrap().is_some());
        assert_eq!(
            mac.send_packet(Some(3), 3, 1).unwrap_err().1,
            Refusal::NoNeighbourQueue
        );
        // The same next hop still queues behind its head, without a timer of its own.
        assert_eq!(mac.send_packet(Some(1), 4, 1).unwrap(), None);
        // Once hop 2's packet is sent, its queue is free for hop 3.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        assert!(matches!(
            mac.packet_sent(Some(2), TxStatus::Ok, &mut rng),
            Some(CsmaDecision::Done {
                packet: 2,
                dropped: false,
                next: None,
                ..
            })
        ));
        assert!(mac.send_packet(Some(3), 3, 1).is_ok());
    }

    #[test]
    fn the_packet_pool_is_shared_by_the_queues() {
        let mut mac = ContikiCsma::new(&ContikiConfig::default(), 4);
        for p in 0..4 {
            assert!(mac.send_packet(Some(1 + (p % 2) as usize), p, 1).is_ok());
        }
        assert_eq!(
            mac.send_packet(Some(1), 9, 1).unwrap_err().1,
            Refusal::NoPacketBuffer
        );
        assert_eq!(mac.buffers_used(), 4);
    }

    #[test]
    fn retries_wait_whole_multiples_of_the_check_interval() {
        let config = ContikiConfig::default();
        assert_eq!(config.timebase(), Duration::from_millis(125));
        let mac = csma();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for transmissions in 0..6u8 {
            let e = u32::from(transmissions.min(3));
            let (mut lo, mut hi) = (u32::MAX, 0);
            for _ in 0..4000 {
                let t = mac.backoff_ticks(transmissions, &mut rng);
                lo = lo.min(t);
                hi = hi.max(t);
            }
            // [time, time + 2^e · time) with time = 16 ticks of 1/128 s.
            assert_eq!(lo, 16, "after {transmissions}");
            assert_eq!(hi, 16 + (1 << e) * 16 - 1, "after {transmissions}");
        }
    }

    #[test]
    fn no_ack_uses_up_transmissions_and_collisions_do_not() {
        let mut mac = csma();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        mac.send_packet(Some(1), 7, 1).unwrap();
        for _ in 0..20 {
            assert!(matches!(
                mac.packet_sent(Some(1), TxStatus::Collision, &mut rng),
                Some(CsmaDecision::Retry(_))
            ));
        }
        for _ in 0..4 {
            assert!(matches!(
                mac.packet_sent(Some(1), TxStatus::NoAck, &mut rng),
                Some(CsmaDecision::Retry(_))
            ));
        }
        // The fifth transmission (SICSLOWPAN_CONF_MAX_MAC_TRANSMISSIONS on wismote) is the last.
        assert!(matches!(
            mac.packet_sent(Some(1), TxStatus::NoAck, &mut rng),
            Some(CsmaDecision::Done {
                packet: 7,
                dropped: true,
                transmissions: 5,
                next: None
            })
        ));
        assert_eq!(mac.neighbour_queues(), 0);
    }

    #[test]
    fn the_next_packet_to_the_same_hop_waits_one_check_interval() {
        let mut mac = csma();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let first = mac.send_packet(Some(1), 1, 1).unwrap().unwrap();
        assert_eq!(first.after, Duration::ZERO);
        mac.send_packet(Some(1), 2, 1).unwrap();
        assert_eq!(
            mac.timer_fired(first.token).map(|(a, p)| (a, *p)),
            Some((Some(1), 1))
        );
        match mac.packet_sent(Some(1), TxStatus::Ok, &mut rng) {
            Some(CsmaDecision::Done {
                packet: 1,
                next: Some(next),
                ..
            }) => {
                assert_eq!(next.after, Duration::from_millis(125));
                assert_eq!(mac.timer_fired(next.token).map(|(_, p)| *p), Some(2));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_cancelled_timer_fires_nothing() {
        let mut mac = csma();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let first = mac.send_packet(Some(1), 1, 1).unwrap().unwrap();
        let Some(CsmaDecision::Retry(retry)) = mac.packet_sent(Some(1), TxStatus::NoAck, &mut rng)
        else {
            panic!("expected a retry");
        };
        assert!(mac.timer_fired(first.token).is_none());
        assert!(mac.timer_fired(retry.token).is_some());
    }
}
