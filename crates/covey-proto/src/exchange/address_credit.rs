//! What an address that has not shown it receives at its address may still be sent: the
//! bytes it sent times the amplification factor, less the bytes already sent to it (the
//! budget QUIC gives an unvalidated path, RFC 9000 §8.1). Counted across every datagram
//! either way, so retransmissions, notifications and error replies all draw on one budget.

use crate::hash::{digest, seeded_map, AddrKey, Map, SeededState};
use crate::storage::fifo::Fifo;
use crate::{Duration, Instant};
use core::net::SocketAddr;

/// Wrong ACK/RST message IDs from an address before acknowledgements stop validating it:
/// a blind attacker must guess a 16-bit message ID, and gets this many guesses.
const MAX_WRONG_GUESSES: u8 = 16;

/// One unverified address's account (bytes saturate at 4 GiB, far beyond any budget).
#[derive(Debug, Clone, Copy)]
struct Credit {
    received: u32,
    sent: u32,
    /// The last datagram either way; the account is forgotten `lifetime` after it.
    last: Instant,
    /// Its place in the eviction order.
    serial: u32,
    wrong_guesses: u8,
}

/// The accounts of unverified addresses, at most `capacity`; the oldest account makes room
/// for a new one. A forgotten account starts again from nothing, so forgetting never lets
/// more than the factor through.
#[derive(Debug)]
pub(crate) struct AddressCredit {
    /// Keyed by a seeded digest of the address: 8-byte keys instead of 32-byte ones.
    accounts: Map<u64, Credit>,
    /// Accounts in the order they were opened, with their serial (stale pairs are skipped).
    order: Fifo<(u64, u32)>,
    next_serial: u32,
    keys: SeededState,
}

impl AddressCredit {
    /// An empty table; `map_seed` keys its hash map.
    pub fn new(map_seed: u64) -> AddressCredit {
        AddressCredit {
            accounts: seeded_map(map_seed),
            order: Fifo::new(),
            next_serial: 0,
            keys: SeededState::with_seed(map_seed.rotate_left(32)),
        }
    }

    /// Counts `len` bytes received from `addr`.
    pub fn received(
        &mut self,
        now: Instant,
        addr: SocketAddr,
        len: usize,
        capacity: usize,
        lifetime: Duration,
    ) {
        if let Some(c) = self.account(now, addr, capacity, lifetime) {
            c.received = c
                .received
                .saturating_add(u32::try_from(len).unwrap_or(u32::MAX));
            c.last = now;
        }
    }

    /// The bytes `addr` may still be sent with amplification factor `factor`.
    pub fn remaining(
        &self,
        now: Instant,
        addr: SocketAddr,
        factor: u32,
        lifetime: Duration,
    ) -> usize {
        self.accounts
            .get(&self.key(addr))
            .filter(|c| !is_stale(c, now, lifetime))
            .map_or(0, |c| {
                let allowed = u64::from(c.received).saturating_mul(u64::from(factor));
                usize::try_from(allowed.saturating_sub(u64::from(c.sent))).unwrap_or(usize::MAX)
            })
    }

    /// Takes `len` bytes from `addr`'s budget if they fit; false (and nothing taken) if not.
    pub fn spend(
        &mut self,
        now: Instant,
        addr: SocketAddr,
        len: usize,
        factor: u32,
        lifetime: Duration,
    ) -> bool {
        let key = self.key(addr);
        let Some(c) = self
            .accounts
            .get_mut(&key)
            .filter(|c| !is_stale(c, now, lifetime))
        else {
            return len == 0;
        };
        let allowed = u64::from(c.received).saturating_mul(u64::from(factor));
        let len32 = u32::try_from(len).unwrap_or(u32::MAX);
        if allowed.saturating_sub(u64::from(c.sent)) < u64::from(len32) {
            return false;
        }
        c.sent = c.sent.saturating_add(len32);
        c.last = now;
        true
    }

    /// Counts an ACK or RST from `addr` that matched nothing sent to it.
    pub fn wrong_guess(&mut self, addr: SocketAddr) {
        let key = self.key(addr);
        if let Some(c) = self.accounts.get_mut(&key) {
            c.wrong_guesses = c.wrong_guesses.saturating_add(1);
        }
    }

    /// Whether an ACK or RST from `addr` may still prove that it receives at its address.
    pub fn may_validate_by_acknowledgement(&self, addr: SocketAddr) -> bool {
        self.accounts
            .get(&self.key(addr))
            .is_none_or(|c| c.wrong_guesses < MAX_WRONG_GUESSES)
    }

    /// Closes `addr`'s account (it was verified).
    pub fn forget(&mut self, addr: SocketAddr) {
        let key = self.key(addr);
        self.accounts.remove(&key);
    }

    /// `addr`'s key in the table.
    fn key(&self, addr: SocketAddr) -> u64 {
        digest(&self.keys, &AddrKey(addr))
    }

    /// Accounts held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.accounts.len()
    }

    /// `addr`'s account, opened (in place of the oldest when full) or restarted when stale.
    fn account(
        &mut self,
        now: Instant,
        addr: SocketAddr,
        capacity: usize,
        lifetime: Duration,
    ) -> Option<&mut Credit> {
        let key = self.key(addr);
        if capacity == 0 {
            return None;
        }
        if !self.accounts.contains_key(&key) {
            while self.accounts.len() >= capacity {
                let (oldest, serial) = self.order.pop_front()?;
                if self
                    .accounts
                    .get(&oldest)
                    .is_some_and(|c| c.serial == serial)
                {
                    self.accounts.remove(&oldest);
                }
            }
            let serial = self.next_serial;
            self.next_serial = self.next_serial.wrapping_add(1);
            self.order.push_back((key, serial));
            // Pairs left by closed accounts are dropped once they outnumber the live ones.
            if self.order.len() > 2 * capacity {
                let accounts = &self.accounts;
                self.order
                    .retain(|(k, s)| accounts.get(k).is_some_and(|c| c.serial == *s));
            }
            self.accounts.insert(
                key,
                Credit {
                    received: 0,
                    sent: 0,
                    last: now,
                    serial,
                    wrong_guesses: 0,
                },
            );
        }
        let c = self.accounts.get_mut(&key)?;
        if is_stale(c, now, lifetime) {
            *c = Credit {
                received: 0,
                sent: 0,
                last: now,
                ..*c
            };
        }
        Some(c)
    }
}

/// Whether account `c` was idle for longer than `lifetime`.
fn is_stale(c: &Credit, now: Instant, lifetime: Duration) -> bool {
    now.saturating_duration_since(c.last) > lifetime
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    const LIFE: Duration = Duration::from_secs(300);

    fn addr(i: u32) -> SocketAddr {
        format!("192.0.2.{}:5683", i).parse().unwrap()
    }

    #[test]
    fn an_address_gets_three_times_what_it_sent_across_datagrams() {
        let mut credit = AddressCredit::new(1);
        let t = Instant::from_secs(1);
        assert_eq!(credit.remaining(t, addr(1), 3, LIFE), 0, "nothing received");
        credit.received(t, addr(1), 10, 8, LIFE);
        assert!(credit.spend(t, addr(1), 20, 3, LIFE));
        assert!(!credit.spend(t, addr(1), 11, 3, LIFE), "only 10 left");
        credit.received(t, addr(1), 5, 8, LIFE);
        assert_eq!(credit.remaining(t, addr(1), 3, LIFE), 25);
        assert_eq!(credit.remaining(t, addr(2), 3, LIFE), 0, "another address");
    }

    #[test]
    fn a_full_table_forgets_the_oldest_and_a_forgotten_account_starts_from_nothing() {
        let mut credit = AddressCredit::new(1);
        let t = Instant::from_secs(1);
        for i in 0..5 {
            credit.received(t, addr(i), 10, 4, LIFE);
        }
        assert_eq!(credit.len(), 4);
        assert_eq!(credit.remaining(t, addr(0), 3, LIFE), 0, "the oldest went");
        assert_eq!(credit.remaining(t, addr(4), 3, LIFE), 30);
        // Closed accounts leave stale order entries; the table stays bounded.
        for round in 0..100 {
            credit.forget(addr(4));
            credit.received(t, addr(4), 1, 4, LIFE);
            assert!(credit.order.len() <= 8, "round {round}");
        }
    }

    #[test]
    fn an_idle_account_expires() {
        let mut credit = AddressCredit::new(1);
        let t = Instant::from_secs(1);
        credit.received(t, addr(1), 10, 4, LIFE);
        let later = t + LIFE + Duration::from_secs(1);
        assert_eq!(credit.remaining(later, addr(1), 3, LIFE), 0);
        credit.received(later, addr(1), 2, 4, LIFE);
        assert_eq!(
            credit.remaining(later, addr(1), 3, LIFE),
            6,
            "started again"
        );
    }

    #[test]
    fn wrong_guesses_stop_acknowledgements_from_validating() {
        let mut credit = AddressCredit::new(1);
        let t = Instant::from_secs(1);
        credit.received(t, addr(1), 10, 4, LIFE);
        for _ in 0..MAX_WRONG_GUESSES {
            assert!(credit.may_validate_by_acknowledgement(addr(1)));
            credit.wrong_guess(addr(1));
        }
        assert!(!credit.may_validate_by_acknowledgement(addr(1)));
        assert!(credit.may_validate_by_acknowledgement(addr(2)));
    }
}
