//! Group addresses for multicast entities: a pool (`ff1e::89:1` ... by default) handed out
//! in sequence, a released address coming back only once the pool is exhausted.

use std::collections::BTreeSet;
use std::fmt;
use std::net::Ipv6Addr;
use std::str::FromStr;

/// A range of IPv6 group addresses: `base` with its last 16 bits running from `first` to
/// `last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupPool {
    /// The address whose low 16 bits are replaced by the sequence number.
    pub base: Ipv6Addr,
    /// First sequence number.
    pub first: u16,
    /// Last sequence number.
    pub last: u16,
}

impl Default for GroupPool {
    /// `ff1e::89:1` to `ff1e::89:ffff`: transient, global scope (the paper's choice).
    fn default() -> GroupPool {
        GroupPool {
            base: Ipv6Addr::new(0xff1e, 0, 0, 0, 0, 0, 0x89, 0),
            first: 1,
            last: u16::MAX,
        }
    }
}

impl GroupPool {
    /// The address of sequence number `seq`.
    pub fn address(&self, seq: u16) -> Ipv6Addr {
        let mut s = self.base.segments();
        s[7] = seq;
        Ipv6Addr::from(s)
    }

    /// The sequence number of `addr`, if it belongs to this pool.
    pub fn sequence(&self, addr: Ipv6Addr) -> Option<u16> {
        let (a, b) = (addr.segments(), self.base.segments());
        (a[..7] == b[..7] && (self.first..=self.last).contains(&a[7])).then_some(a[7])
    }

    /// How many addresses the pool holds.
    pub fn size(&self) -> u32 {
        u32::from(self.last) - u32::from(self.first) + 1
    }
}

/// Why a pool description does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid group pool \"{0}\": expected a multicast IPv6 prefix of length 112 to 127, e.g. ff1e::89:0/112")]
pub struct GroupPoolError(String);

impl FromStr for GroupPool {
    type Err = GroupPoolError;

    /// `ff1e::89:0/112` (sequence numbers 1 to ffff), `ff1e::89:100/120` (101 to 1ff), or
    /// a bare address (the /112 around it).
    fn from_str(text: &str) -> Result<GroupPool, GroupPoolError> {
        let err = || GroupPoolError(text.to_string());
        let (addr, len) = match text.split_once('/') {
            Some((a, l)) => (a, l.parse::<u8>().map_err(|_| err())?),
            None => (text, 112),
        };
        let base: Ipv6Addr = addr.parse().map_err(|_| err())?;
        if !base.is_multicast() || !(112..=127).contains(&len) {
            return Err(err());
        }
        let host_bits = 128 - u32::from(len);
        let mask = ((1u32 << host_bits) - 1) as u16;
        let low = base.segments()[7] & !mask;
        Ok(GroupPool {
            base,
            // The all-zero host part is skipped when the range allows.
            first: if mask > 0 { low + 1 } else { low },
            last: low | mask,
        })
    }
}

impl fmt::Display for GroupPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} to {}",
            self.address(self.first),
            self.address(self.last)
        )
    }
}

/// The addresses handed out and the position of the next one.
#[derive(Debug, Clone)]
pub struct MulticastPool {
    pool: GroupPool,
    /// The next sequence number to try; one past `last` once the end was reached.
    cursor: u32,
    in_use: BTreeSet<u16>,
}

impl MulticastPool {
    /// A pool starting at `cursor` (as saved by [`MulticastPool::cursor`]) or at its first
    /// address.
    pub fn new(pool: GroupPool, cursor: Option<u32>) -> MulticastPool {
        let first = u32::from(pool.first);
        let cursor = cursor
            .filter(|c| (first..=u32::from(pool.last) + 1).contains(c))
            .unwrap_or(first);
        MulticastPool {
            pool,
            cursor,
            in_use: BTreeSet::new(),
        }
    }

    /// The pool's range.
    pub fn range(&self) -> GroupPool {
        self.pool
    }

    /// Marks an address as taken (e.g. loaded from the store); false if not in the pool.
    pub fn mark_used(&mut self, addr: Ipv6Addr) -> bool {
        match self.pool.sequence(addr) {
            Some(seq) => {
                self.in_use.insert(seq);
                true
            }
            None => false,
        }
    }

    /// The next free address after the last one handed out, wrapping around to released
    /// ones only when the end of the pool is reached; `None` when every one is taken.
    pub fn allocate(&mut self) -> Option<Ipv6Addr> {
        let (first, last) = (u32::from(self.pool.first), u32::from(self.pool.last));
        let forward = self.cursor..=last;
        let wrapped = first..self.cursor.min(last + 1);
        let seq = forward
            .chain(wrapped)
            .filter_map(|s| u16::try_from(s).ok())
            .find(|s| !self.in_use.contains(s))?;
        self.in_use.insert(seq);
        self.cursor = u32::from(seq) + 1;
        Some(self.pool.address(seq))
    }

    /// Gives an address back; it is reused only after the rest of the pool.
    pub fn release(&mut self, addr: Ipv6Addr) {
        if let Some(seq) = self.pool.sequence(addr) {
            self.in_use.remove(&seq);
        }
    }

    /// The position to save so a restarted EM continues the sequence.
    pub fn cursor(&self) -> u32 {
        self.cursor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    #[test]
    fn hands_out_in_sequence_from_ff1e_89_1() {
        let mut p = MulticastPool::new(GroupPool::default(), None);
        assert_eq!(p.allocate(), Some(addr("ff1e::89:1")));
        assert_eq!(p.allocate(), Some(addr("ff1e::89:2")));
        p.release(addr("ff1e::89:1"));
        assert_eq!(
            p.allocate(),
            Some(addr("ff1e::89:3")),
            "a released address is not reused while others remain"
        );
    }

    #[test]
    fn reuses_only_when_exhausted() {
        let pool: GroupPool = "ff1e::89:0/126".parse().unwrap();
        assert_eq!((pool.first, pool.last), (1, 3));
        let mut p = MulticastPool::new(pool, None);
        let a: Vec<_> = (0..3).map(|_| p.allocate().unwrap()).collect();
        assert_eq!(a[2], addr("ff1e::89:3"));
        assert_eq!(p.allocate(), None, "exhausted");
        p.release(a[1]);
        assert_eq!(p.allocate(), Some(a[1]), "now the released one comes back");
        assert_eq!(p.allocate(), None);
    }

    #[test]
    fn cursor_survives_a_restart() {
        let mut p = MulticastPool::new(GroupPool::default(), None);
        let first = p.allocate().unwrap();
        p.release(first);
        let mut q = MulticastPool::new(GroupPool::default(), Some(p.cursor()));
        assert_eq!(q.allocate(), Some(addr("ff1e::89:2")));
        assert!(q.mark_used(addr("ff1e::89:3")));
        assert_eq!(q.allocate(), Some(addr("ff1e::89:4")));
        assert!(!q.mark_used(addr("ff02::1")));
    }

    #[test]
    fn parses_pool_descriptions() {
        assert_eq!(
            "ff1e::89:0/112".parse::<GroupPool>().unwrap(),
            GroupPool::default()
        );
        let p: GroupPool = "ff15::100/120".parse().unwrap();
        assert_eq!((p.first, p.last), (0x101, 0x1ff));
        assert!("2001:db8::/112".parse::<GroupPool>().is_err());
        assert!("ff1e::/64".parse::<GroupPool>().is_err());
        assert!("nonsense".parse::<GroupPool>().is_err());
    }
}
