//! The observe layer's state (RFC 7641 §4): the registered observers, indexed by (client
//! address, token) and by their notifications' message IDs, the notification rounds under
//! way, and the memo of the last holder refused beyond its fair share. Its fields are
//! private; the endpoint composes it with the message layer through the methods here, which
//! take the peer table and buffer pool they read as arguments.

use crate::config::FairShare;
use crate::message::peer::PeerTable;
use crate::message::wire::{notification_into, Outgoing};
use crate::observe::notification_mids::{MidRole, NotificationMids};
use crate::observe::observer::Observer;
use crate::observe::observer_index::ObserverIndex;
use crate::observe::round::Rounds;
use crate::storage::buffer_pool::BufferPool;
use crate::storage::fair_share::{
    heaviest_unverified, judge, Beyond, RefusalMemo, ShareLimits, Source, Verdict,
};
use crate::storage::slab::{Slab, SlabKey};
use core::net::SocketAddr;
use covey_core::{uint, CoapOption, MessageType, OptionNumber, Token};

/// Where a new observer of a full table goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Room {
    /// A slot is free.
    Free,
    /// The observation `key` is to end first; its holder is beyond its share (or unverified
    /// while the newcomer is verified).
    Evict(SlabKey),
    /// Nobody may go, or the newcomer (or its source) would be beyond its share: then what
    /// it is beyond by, for [`Observers::remember_refusal`].
    Refused(Option<Beyond>),
}

/// The registered observers and their notification rounds.
#[derive(Debug)]
pub(crate) struct Observers {
    table: Slab<Observer>,
    index: ObserverIndex,
    mids: NotificationMids,
    refusals: RefusalMemo,
    rounds: Rounds,
}

impl Observers {
    /// Room for `capacity` observers, the indices hashed with their own seeds.
    pub fn new(capacity: usize, index_seed: u64, mids_seed: u64) -> Observers {
        Observers {
            table: Slab::with_capacity(capacity),
            index: ObserverIndex::new(index_seed),
            mids: NotificationMids::new(mids_seed),
            refusals: RefusalMemo::default(),
            rounds: Rounds::default(),
        }
    }

    /// Observer `key`.
    pub fn get(&self, key: SlabKey) -> Option<&Observer> {
        self.table.get(key)
    }

    /// Observer `key`, to change its sequence number or CON bookkeeping.
    pub fn get_mut(&mut self, key: SlabKey) -> Option<&mut Observer> {
        self.table.get_mut(key)
    }

    /// Slots the table has handed out so far: observer keys sit at indices below this.
    pub fn slots_created(&self) -> usize {
        self.table.slots_created()
    }

    /// The observer in slot `index`, if any.
    pub fn key_at(&self, index: usize) -> Option<SlabKey> {
        self.table.key_at(index)
    }

    /// Number of observers of `resource`.
    pub fn count_of(&self, resource: u64) -> usize {
        self.table
            .iter()
            .filter(|(_, o)| o.resource == resource)
            .count()
    }

    /// The observer registered by `remote` with `token`.
    pub fn find(&self, peers: &PeerTable, remote: SocketAddr, token: Token) -> Option<SlabKey> {
        self.index.find(&self.table, peers, remote, token)
    }

    /// The observer that notification `mid` to `remote` went to (its last NON, or the CON
    /// its notification in flight replaced).
    pub fn find_by_mid(&self, peers: &PeerTable, remote: SocketAddr, mid: u16) -> Option<SlabKey> {
        self.mids.find(&self.table, peers, remote, mid)
    }

    /// Registers `observer` (of `remote`, whose peer it names); `None` when the table is full.
    pub fn insert(
        &mut self,
        peers: &PeerTable,
        observer: Observer,
        remote: SocketAddr,
    ) -> Option<SlabKey> {
        let token = observer.token;
        let key = self.table.insert(observer).ok()?;
        self.index.insert(&self.table, peers, key, remote, token);
        Some(key)
    }

    /// Unregisters observer `key`: its indices, and its place in a round. The caller ends
    /// its CON in flight first and releases its peer after.
    pub fn remove(
        &mut self,
        peers: &PeerTable,
        pool: &mut BufferPool,
        key: SlabKey,
    ) -> Option<Observer> {
        self.set_mid(peers, key, MidRole::LastNon, None);
        self.set_mid(peers, key, MidRole::Replaced, None);
        let mut o = self.table.remove(key)?;
        self.refusals.entry_removed();
        self.rounds.settle(&mut o, pool);
        if let Some(remote) = peers.addr(o.peer) {
            self.index.remove(key, remote, o.token);
        }
        Some(o)
    }

    /// Sets observer `key`'s `role` message ID (`None` forgets it), so that an RST to that
    /// notification ends the observation.
    pub fn set_mid(&mut self, peers: &PeerTable, key: SlabKey, role: MidRole, mid: Option<u16>) {
        let Some(o) = self.table.get_mut(key) else {
            return;
        };
        let old = core::mem::replace(role.field(o), mid);
        let Some(remote) = peers.addr(o.peer) else {
            return;
        };
        // The entry of the old ID goes before the new one is indexed: a rehash reads IDs
        // from the observers.
        if let Some(old) = old {
            self.mids.remove(key, role, remote, old);
        }
        if let Some(mid) = mid {
            self.mids.insert(&self.table, peers, key, role, remote, mid);
        }
    }

    /// Where an observer of `remote` goes: a free slot, the place of an observation to
    /// evict, or nowhere. A verified newcomer takes the place of an observation of the
    /// source whose unverified peers hold the most (`verified` tells which count as such);
    /// otherwise room is taken from the peer or source most beyond its share, and a newcomer
    /// beyond its own share is refused.
    pub fn room_for(
        &self,
        peers: &PeerTable,
        remote: SocketAddr,
        remote_verified: impl FnOnce() -> bool,
        verified: impl Fn(&SocketAddr) -> bool,
        limits: &FairShare,
    ) -> Room {
        if !self.table.is_full() {
            return Room::Free;
        }
        if remote_verified() {
            if let Some(key) = self.unverified_observer(peers, &verified) {
                return Room::Evict(key);
            }
        }
        if self.refusals.refuses(&remote) {
            return Room::Refused(None);
        }
        let limits = ShareLimits::new(limits, self.table.capacity());
        let held = || {
            self.table
                .iter()
                .filter_map(|(_, o)| Some((peers.addr(o.peer)?, 1)))
        };
        let holder = match judge(held, &remote, 1, limits) {
            Verdict::Evict(holder) => holder,
            Verdict::Refuse(beyond) => return Room::Refused(Some(beyond)),
            Verdict::Full => return Room::Refused(None),
        };
        let victim = self.table.iter().find_map(|(key, o)| {
            let addr = peers.addr(o.peer)?;
            holder.holds(&addr).then_some(key)
        });
        victim.map_or(Room::Refused(None), Room::Evict)
    }

    /// Remembers a refusal, so a flood from the same holder is refused without a scan until
    /// as many observations ended as it was beyond its share.
    pub fn remember_refusal(&mut self, beyond: Beyond) {
        self.refusals.remember(beyond);
    }

    /// An observation of the source whose unverified peers hold the most of the table.
    fn unverified_observer(
        &self,
        peers: &PeerTable,
        verified: &impl Fn(&SocketAddr) -> bool,
    ) -> Option<SlabKey> {
        let held = self
            .table
            .iter()
            .filter_map(|(_, o)| Some((peers.addr(o.peer)?, 1)));
        let source = heaviest_unverified(held, verified)?;
        self.table.iter().find_map(|(key, o)| {
            let addr = peers.addr(o.peer)?;
            (Source::of(&addr) == source && !verified(&addr)).then_some(key)
        })
    }

    /// Makes `m` (a NON message without token) `resource`'s newest representation, in its
    /// round or a new one; false when it cannot be encoded.
    pub fn start_round(&mut self, resource: u64, m: &Outgoing<'_>, pool: &mut BufferPool) -> bool {
        self.rounds.set_template(resource, m, pool)
    }

    /// The newest representation of `resource`, if a round is under way.
    pub fn template(&self, resource: u64) -> Option<&[u8]> {
        self.rounds.template(resource)
    }

    /// Makes observer `key` due in its resource's round; false if it already was or is gone.
    pub fn mark_due(&mut self, key: SlabKey) -> bool {
        match self.table.get_mut(key) {
            Some(o) => self.rounds.mark_due(o),
            None => false,
        }
    }

    /// Observer `key` is no longer due in its round (notified, or its state superseded).
    pub fn settle(&mut self, key: SlabKey, pool: &mut BufferPool) {
        if let Some(o) = self.table.get_mut(key) {
            self.rounds.settle(o, pool);
        }
    }

    /// A CON notification of observer `key` now reads its resource's representation.
    pub fn hold_round(&mut self, resource: u64) {
        self.rounds.hold(resource);
    }

    /// A CON notification written from `resource`'s representation ended.
    pub fn release_round(&mut self, resource: u64, pool: &mut BufferPool) {
        self.rounds.release(resource, pool);
    }

    /// Ends `resource`'s round if nobody is due in it and no CON notification reads it.
    pub fn end_round_if_idle(&mut self, resource: u64, pool: &mut BufferPool) {
        self.rounds.end_if_idle(resource, pool);
    }

    /// The next due observer, going round the table; `None` when nobody is due.
    pub fn next_due(&mut self) -> Option<SlabKey> {
        self.rounds.next_due(&self.table)
    }

    /// True while some observer still waits for a notification.
    pub fn any_due(&self) -> bool {
        self.rounds.any_due()
    }

    /// Notifications that may still go before the next queued datagram.
    pub fn credit(&self) -> usize {
        self.rounds.credit
    }

    /// Sets how many notifications may go before the next queued datagram.
    pub fn set_credit(&mut self, credit: usize) {
        self.rounds.credit = credit;
    }

    /// Writes observer `key`'s notification with Observe value `sequence` into `buf` from its
    /// round's representation; `None` when there is none or it does not fit.
    pub fn write_notification(
        &self,
        key: SlabKey,
        message_type: MessageType,
        message_id: u16,
        sequence: u32,
        buf: &mut [u8],
    ) -> Option<usize> {
        let o = self.table.get(key)?;
        let template = self.rounds.template(o.resource)?;
        let mut value = [0u8; 4];
        let observe = [CoapOption {
            number: OptionNumber::OBSERVE,
            value: uint::encode(sequence, &mut value),
        }];
        let token = o.token.as_bytes();
        notification_into(template, message_type, message_id, token, &observe, buf).ok()
    }
}

/// The scanned indexes (without `hash-tables`) find what the hashed ones do, through
/// registrations, notification message IDs and removals in a random order.
#[cfg(all(test, feature = "hash-tables"))]
mod scanned_index_tests {
    use crate::message::peer::PeerTable;
    use crate::observe::notification_mids::{HashedMids, MidRole, ScannedMids};
    use crate::observe::observer::Observer;
    use crate::observe::observer_index::{HashedObserverIndex, ScannedObservers};
    use crate::rng::Rng;
    use crate::storage::slab::{Slab, SlabKey};
    use crate::{Config, Instant};
    use core::net::SocketAddr;
    use covey_core::Token;
    use std::vec::Vec;

    #[test]
    fn scanned_indexes_find_what_hashed_ones_do() {
        let config = Config::mote();
        let mut peers = PeerTable::new(&config, 1);
        let addrs: Vec<SocketAddr> = (1..=3)
            .map(|p| SocketAddr::new("2001:db8::1".parse().unwrap(), p))
            .collect();
        let peer_keys: Vec<_> = addrs
            .iter()
            .map(|&a| peers.get_or_insert(a, Instant::ZERO, &config, 0, |_| false))
            .collect::<Option<_>>()
            .unwrap();
        let mut observers: Slab<Observer> = Slab::with_capacity(8);
        let (mut hashed, mut scanned) = (HashedObserverIndex::new(5), ScannedObservers::new(5));
        let (mut hashed_mids, mut scanned_mids) = (HashedMids::new(6), ScannedMids::new(6));
        let mut live: Vec<(SlabKey, usize)> = Vec::new();
        let mut rng = Rng::new(9);
        for _ in 0..2_000 {
            let draw = rng.next_u32();
            let (p, token) = (
                (draw % 3) as usize,
                Token::from_u64(u64::from(draw >> 8 & 3), 1),
            );
            match draw >> 16 & 3 {
                // A registration is unique by (address, token), as `respond_observable` makes it.
                0 if !observers
                    .iter()
                    .any(|(_, o)| o.token == token && o.peer == peer_keys[p]) =>
                {
                    let observer = Observer {
                        token,
                        resource: 1,
                        peer: peer_keys[p],
                        sequence: 0,
                        in_flight: None,
                        last_non_mid: None,
                        replaced_mid: None,
                        last_con: Instant::ZERO,
                        since_con: 0,
                        due: false,
                        #[cfg(feature = "oscore")]
                        protected: false,
                    };
                    if let Ok(key) = observers.insert(observer) {
                        hashed.insert(&observers, &peers, key, addrs[p], token);
                        scanned.insert(&observers, &peers, key, addrs[p], token);
                        live.push((key, p));
                    }
                }
                1 | 2 if !live.is_empty() => {
                    // A new message ID for one of its roles, as `Observers::set_mid` sets it.
                    let (key, p) = live[(draw >> 20) as usize % live.len()];
                    let role = if draw >> 18 & 1 == 0 {
                        MidRole::LastNon
                    } else {
                        MidRole::Replaced
                    };
                    let mid = Some((draw >> 24) as u16 % 8).filter(|&m| m < 6);
                    // A message ID goes to one notification of a peer at a time.
                    let held = |o: &Observer| o.last_non_mid == mid || o.replaced_mid == mid;
                    if mid.is_some()
                        && observers
                            .iter()
                            .any(|(_, o)| o.peer == peer_keys[p] && held(o))
                    {
                        continue;
                    }
                    let o = observers.get_mut(key).unwrap();
                    if let Some(old) = core::mem::replace(role.field(o), mid) {
                        hashed_mids.remove(key, role, addrs[p], old);
                        scanned_mids.remove(key, role, addrs[p], old);
                    }
                    if let Some(mid) = mid {
                        hashed_mids.insert(&observers, &peers, key, role, addrs[p], mid);
                        scanned_mids.insert(&observers, &peers, key, role, addrs[p], mid);
                    }
                }
                3 if !live.is_empty() => {
                    let (key, p) = live.swap_remove((draw >> 20) as usize % live.len());
                    for role in [MidRole::LastNon, MidRole::Replaced] {
                        if let Some(old) = role.field(observers.get_mut(key).unwrap()).take() {
                            hashed_mids.remove(key, role, addrs[p], old);
                            scanned_mids.remove(key, role, addrs[p], old);
                        }
                    }
                    let o = observers.remove(key).unwrap();
                    hashed.remove(key, addrs[p], o.token);
                    scanned.remove(key, addrs[p], o.token);
                }
                _ => {}
            }
            for &addr in &addrs {
                for t in 0..4 {
                    let token = Token::from_u64(t, 1);
                    assert_eq!(
                        scanned.find(&observers, &peers, addr, token),
                        hashed.find(&observers, &peers, addr, token)
                    );
                }
                for mid in 0..8 {
                    assert_eq!(
                        scanned_mids.find(&observers, &peers, addr, mid),
                        hashed_mids.find(&observers, &peers, addr, mid)
                    );
                }
            }
        }
    }
}
