//! Notification rounds (RFC 7641 §4.2): the state a resource notifies its observers with,
//! encoded once and shared, and a cursor over the observers still due, so a round holds
//! one representation per resource instead of one datagram per observer. CON
//! notifications in flight read the same representation for every retransmission, so the
//! round lasts until the last of them ends too.

use crate::message::wire::Outgoing;
use crate::observe::observer::Observer;
use crate::storage::buffer_pool::BufferPool;
use crate::storage::datagram_buf::DatagramBuf;
use crate::storage::slab::{Slab, SlabKey};
use alloc::vec::Vec;

/// Notifications `poll_transmit` hands out after each other queued datagram while both
/// wait: a round to thousands of observers delays a response by a few datagrams at most,
/// and a stream of responses slows a round down without stopping it.
pub(crate) const NOTIFICATIONS_PER_QUEUED: usize = 8;

/// One resource's round under way.
#[derive(Debug)]
struct Round {
    resource: u64,
    /// The newest representation: a NON message with no token and message ID 0, whose
    /// options (without Observe) and payload every due observer gets.
    template: DatagramBuf,
    /// Observers of the resource still due.
    due: usize,
    /// CON notifications in flight that are written from `template`.
    confirming: usize,
}

impl Round {
    /// Nobody is due and no CON notification reads the template any longer.
    fn is_idle(&self) -> bool {
        self.due == 0 && self.confirming == 0
    }
}

/// The rounds under way, at most one per resource: a newer state replaces the template, so
/// observers not yet notified get only the newest (RFC 7641 §4.5 lets them skip states).
#[derive(Debug, Default)]
pub(crate) struct Rounds {
    rounds: Vec<Round>,
    /// Due observers of every round.
    due: usize,
    /// Next observer slab index to look at; it goes round the slab so each observer waits
    /// at most one lap.
    cursor: usize,
    /// Notifications that may still go before the next queued datagram; at 0 a waiting
    /// datagram goes first.
    pub credit: usize,
}

impl Rounds {
    /// True while some observer still waits for a notification.
    pub fn any_due(&self) -> bool {
        self.due > 0
    }

    /// Makes `m` (a NON message without token) `resource`'s newest representation, in its
    /// round or a new one. False when it cannot be encoded: the round, if any, keeps the
    /// representation it had, which CON notifications in flight still read.
    pub fn set_template(&mut self, resource: u64, m: &Outgoing<'_>, pool: &mut BufferPool) -> bool {
        let mut encoded = DatagramBuf::default();
        if encoded.encode(m, pool).is_err() {
            return false;
        }
        match self.rounds.iter_mut().find(|r| r.resource == resource) {
            Some(r) => core::mem::replace(&mut r.template, encoded).release(pool),
            None => self.rounds.push(Round {
                resource,
                template: encoded,
                due: 0,
                confirming: 0,
            }),
        }
        true
    }

    /// The newest representation of `resource`, if a round is under way.
    pub fn template(&self, resource: u64) -> Option<&[u8]> {
        self.rounds
            .iter()
            .find(|r| r.resource == resource)
            .map(|r| r.template.as_slice())
    }

    /// Makes `o` due in its resource's round (which must exist); false if it already was.
    pub fn mark_due(&mut self, o: &mut Observer) -> bool {
        if o.due {
            return false;
        }
        if let Some(r) = self.rounds.iter_mut().find(|r| r.resource == o.resource) {
            o.due = true;
            r.due += 1;
            self.due += 1;
        }
        o.due
    }

    /// `o` is no longer due (notified, or gone); a round with no one left due and no CON
    /// notification in flight ends and gives its buffer back.
    pub fn settle(&mut self, o: &mut Observer, pool: &mut BufferPool) {
        if !core::mem::take(&mut o.due) {
            return;
        }
        self.due = self.due.saturating_sub(1);
        if let Some(r) = self.rounds.iter_mut().find(|r| r.resource == o.resource) {
            r.due = r.due.saturating_sub(1);
        }
        self.end_if_idle(o.resource, pool);
    }

    /// A CON notification written from `resource`'s template started; the round (which
    /// must exist) keeps the template until [`Rounds::release`].
    pub fn hold(&mut self, resource: u64) {
        if let Some(r) = self.rounds.iter_mut().find(|r| r.resource == resource) {
            r.confirming += 1;
        }
    }

    /// A CON notification written from `resource`'s template ended.
    pub fn release(&mut self, resource: u64, pool: &mut BufferPool) {
        if let Some(r) = self.rounds.iter_mut().find(|r| r.resource == resource) {
            r.confirming = r.confirming.saturating_sub(1);
        }
        self.end_if_idle(resource, pool);
    }

    /// Ends `resource`'s round if nobody is due in it and no CON notification reads its
    /// template (e.g. a round whose template was encoded for observers that all left).
    pub fn end_if_idle(&mut self, resource: u64, pool: &mut BufferPool) {
        if let Some(i) = self
            .rounds
            .iter()
            .position(|r| r.resource == resource && r.is_idle())
        {
            self.rounds.swap_remove(i).template.release(pool);
        }
    }

    /// The next due observer after the cursor, going round the slab; `None` when nobody
    /// is due.
    pub fn next_due(&mut self, observers: &Slab<Observer>) -> Option<SlabKey> {
        let slots = observers.slots_created();
        if self.due == 0 || slots == 0 {
            return None;
        }
        for _ in 0..slots {
            let index = self.cursor % slots;
            self.cursor = index + 1;
            if let Some(key) = observers.key_at(index) {
                if observers.get(key).is_some_and(|o| o.due) {
                    return Some(key);
                }
            }
        }
        // Counts out of step with the flags would be a bug; do not loop on them, and keep
        // the templates CON notifications in flight still read.
        self.due = 0;
        for r in &mut self.rounds {
            r.due = 0;
        }
        self.rounds.retain(|r| !r.is_idle());
        None
    }
}
