//! SipHash-c-d (Aumasson and Bernstein) written for code size: one out-of-line run of rounds
//! and a byte-at-a-time tail buffer. It is hand-written although the `siphasher` crate
//! computes the same function, because that crate's unrolled rounds and word loads cost
//! about 1.4 KiB of flash on a 32 KiB node; the tests check it against the crate.

use core::hash::Hasher;

/// SipHash-1-3, the tables' hash where foldhash is not used (crate::hash).
#[cfg(any(test, not(all(target_has_atomic = "ptr", feature = "hash-tables"))))]
pub(crate) type SipHasher13 = SipHasher<1, 3>;

/// SipHash-2-4, the Echo values' MAC.
#[cfg(any(test, feature = "address-validation"))]
pub(crate) type SipHasher24 = SipHasher<2, 4>;

/// SipHash with `C` compression rounds per 8-byte block and `D` finalization rounds.
#[derive(Debug, Clone)]
pub(crate) struct SipHasher<const C: usize, const D: usize>(State);

/// The state; its functions take the round counts as arguments, so 1-3 and 2-4 share them.
#[derive(Debug, Clone)]
struct State {
    v: [u64; 4],
    /// The block being filled: `len % 8` bytes, the rest zero.
    tail: [u8; 8],
    /// Bytes written; only the low byte goes into the hash.
    len: usize,
}

impl<const C: usize, const D: usize> SipHasher<C, D> {
    /// A hasher keyed by `k0` and `k1`, as siphasher's `new_with_keys`.
    #[inline]
    pub(crate) fn new_with_keys(k0: u64, k1: u64) -> Self {
        SipHasher(State::new(k0, k1))
    }
}

impl State {
    /// Out of line: inlined, each hashing site would carry the constants.
    #[inline(never)]
    fn new(k0: u64, k1: u64) -> State {
        State {
            v: [
                k0 ^ 0x736f_6d65_7073_6575,
                k1 ^ 0x646f_7261_6e64_6f6d,
                k0 ^ 0x6c79_6765_6e65_7261,
                k1 ^ 0x7465_6462_7974_6573,
            ],
            tail: [0; 8],
            len: 0,
        }
    }

    /// Adds `msg`, compressing each block it fills with `c` rounds.
    #[inline(never)]
    fn write(&mut self, msg: &[u8], c: usize) {
        for &b in msg {
            let i = self.len % 8;
            self.tail[i] = b;
            self.len = self.len.wrapping_add(1);
            if i == 7 {
                compress(&mut self.v, u64::from_le_bytes(self.tail), c);
                self.tail = [0; 8];
            }
        }
    }

    /// The hash: the last block (tail and length) with `c` rounds, then `d` rounds.
    #[inline(never)]
    fn finish(&self, c: usize, d: usize) -> u64 {
        let mut v = self.v;
        let mut last = self.tail;
        last[7] = self.len as u8;
        compress(&mut v, u64::from_le_bytes(last), c);
        v[2] ^= 0xff;
        rounds(&mut v, d);
        v[0] ^ v[1] ^ v[2] ^ v[3]
    }
}

/// One block `m` mixed in with `c` rounds.
fn compress(v: &mut [u64; 4], m: u64, c: usize) {
    v[3] ^= m;
    rounds(v, c);
    v[0] ^= m;
}

/// `n` SipRounds; out of line and not unrolled, the code size being the point.
#[inline(never)]
fn rounds(v: &mut [u64; 4], n: usize) {
    for _ in 0..n {
        v[0] = v[0].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].wrapping_add(v[3]);
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].wrapping_add(v[1]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[2] = v[2].rotate_left(32);
    }
}

/// Integers are written as their little-endian bytes, as siphasher does on every target
/// (`Hasher`'s defaults write native order); `write_u128` keeps the default, as siphasher does.
impl<const C: usize, const D: usize> Hasher for SipHasher<C, D> {
    #[inline]
    fn write(&mut self, msg: &[u8]) {
        self.0.write(msg, C);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0.finish(C, D)
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.write(&i.to_le_bytes());
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write(&i.to_le_bytes());
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.write(&i.to_le_bytes());
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write(&i.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    /// The SipHash paper's SipHash-2-4 outputs (as little-endian words) for key 00..0f and
    /// messages 00..i, i in 0..64.
    #[rustfmt::skip]
    const VECTORS_2_4: [u64; 64] = [
        0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d,
        0xcf2794e0277187b7, 0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137,
        0x93f5f5799a932462, 0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7,
        0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee, 0xa129ca6149be45e5,
        0x3f2acc7f57c29bdb, 0x699ae9f52cbe4794, 0x4bc1b3f0968dd39c, 0xbb6dc91da77961bd,
        0xbed65cf21aa2ee98, 0xd0f2cbb02e3b67c7, 0x93536795e3a33e88, 0xa80c038ccd5ccec8,
        0xb8ad50c6f649af94, 0xbce192de8a85b8ea, 0x17d835b85bbb15f3, 0x2f2e6163076bcfad,
        0xde4daaaca71dc9a5, 0xa6a2506687956571, 0xad87a3535c49ef28, 0x32d892fad841c342,
        0x7127512f72f27cce, 0xa7f32346f95978e3, 0x12e0b01abb051238, 0x15e034d40fa197ae,
        0x314dffbe0815a3b4, 0x027990f029623981, 0xcadcd4e59ef40c4d, 0x9abfd8766a33735c,
        0x0e3ea96b5304a7d0, 0xad0c42d6fc585992, 0x187306c89bc215a9, 0xd4a60abcf3792b95,
        0xf935451de4f21df2, 0xa9538f0419755787, 0xdb9acddff56ca510, 0xd06c98cd5c0975eb,
        0xe612a3cb9ecba951, 0xc766e62cfcadaf96, 0xee64435a9752fe72, 0xa192d576b245165a,
        0x0a8787bf8ecb74b2, 0x81b3e73d20b49b6f, 0x7fa8220ba3b2ecea, 0x245731c13ca42499,
        0xb78dbfaf3a8d83bd, 0xea1ad565322a1a0b, 0x60e61c23a3795013, 0x6606d7e446282b93,
        0x6ca4ecb15c5f91e1, 0x9f626da15c9625f3, 0xe51b38608ef25f57, 0x958a324ceb064572,
    ];

    /// `msg` hashed in one write by ours and by siphasher, 1-3 and 2-4.
    fn both(k0: u64, k1: u64, msg: &[u8]) -> [(u64, u64); 2] {
        let mut a = SipHasher13::new_with_keys(k0, k1);
        let mut b = siphasher::sip::SipHasher13::new_with_keys(k0, k1);
        a.write(msg);
        b.write(msg);
        let mut c = SipHasher24::new_with_keys(k0, k1);
        let mut d = siphasher::sip::SipHasher24::new_with_keys(k0, k1);
        c.write(msg);
        d.write(msg);
        [(a.finish(), b.finish()), (c.finish(), d.finish())]
    }

    #[test]
    fn the_papers_vectors() {
        let (k0, k1) = (0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908);
        let msg: Vec<u8> = (0..64).collect();
        for (i, &expected) in VECTORS_2_4.iter().enumerate() {
            let [(ours13, theirs13), (ours24, theirs24)] = both(k0, k1, &msg[..i]);
            assert_eq!(ours24, expected, "2-4, {i} bytes");
            assert_eq!(theirs24, expected, "siphasher 2-4, {i} bytes");
            assert_eq!(ours13, theirs13, "1-3, {i} bytes");
        }
    }

    /// A typed or byte write, as `Hash` impls make them.
    #[derive(Debug, Clone)]
    enum Write {
        U8(u8),
        U16(u16),
        U32(u32),
        U64(u64),
        U128(u128),
        Usize(usize),
        Bytes(Vec<u8>),
    }

    fn write() -> impl Strategy<Value = Write> {
        prop_oneof![
            any::<u8>().prop_map(Write::U8),
            any::<u16>().prop_map(Write::U16),
            any::<u32>().prop_map(Write::U32),
            any::<u64>().prop_map(Write::U64),
            any::<u128>().prop_map(Write::U128),
            any::<usize>().prop_map(Write::Usize),
            proptest::collection::vec(any::<u8>(), 0..20).prop_map(Write::Bytes),
        ]
    }

    fn apply(h: &mut impl Hasher, w: &Write) {
        match w {
            Write::U8(x) => h.write_u8(*x),
            Write::U16(x) => h.write_u16(*x),
            Write::U32(x) => h.write_u32(*x),
            Write::U64(x) => h.write_u64(*x),
            Write::U128(x) => h.write_u128(*x),
            Write::Usize(x) => h.write_usize(*x),
            Write::Bytes(b) => h.write(b),
        }
    }

    /// The writes hashed by ours and by siphasher, 1-3 and 2-4.
    fn both_writes(k0: u64, k1: u64, writes: &[Write]) -> [(u64, u64); 2] {
        let mut a = SipHasher13::new_with_keys(k0, k1);
        let mut b = siphasher::sip::SipHasher13::new_with_keys(k0, k1);
        let mut c = SipHasher24::new_with_keys(k0, k1);
        let mut d = siphasher::sip::SipHasher24::new_with_keys(k0, k1);
        for w in writes {
            apply(&mut a, w);
            apply(&mut b, w);
            apply(&mut c, w);
            apply(&mut d, w);
        }
        [(a.finish(), b.finish()), (c.finish(), d.finish())]
    }

    proptest! {
        /// Every length 0..=100 (prefixes of one random message) under a random key.
        #[test]
        fn random_messages_hash_as_siphasher(
            k0 in any::<u64>(),
            k1 in any::<u64>(),
            msg in proptest::collection::vec(any::<u8>(), 100),
        ) {
            for n in 0..=msg.len() {
                for (ours, theirs) in both(k0, k1, &msg[..n]) {
                    prop_assert_eq!(ours, theirs, "{} bytes", n);
                }
            }
        }

        /// A message written in three pieces, at every pair of split points, hashes as it
        /// does in one write.
        #[test]
        fn split_writes_hash_as_one(
            k0 in any::<u64>(),
            k1 in any::<u64>(),
            msg in proptest::collection::vec(any::<u8>(), 0..=40),
        ) {
            let whole = both(k0, k1, &msg);
            for i in 0..=msg.len() {
                for j in i..=msg.len() {
                    let pieces = [&msg[..i], &msg[i..j], &msg[j..]]
                        .map(|p| Write::Bytes(p.to_vec()));
                    let split = both_writes(k0, k1, &pieces);
                    for ((ours, theirs), (one, _)) in split.into_iter().zip(whole) {
                        prop_assert_eq!(ours, theirs, "split at {} and {}", i, j);
                        prop_assert_eq!(ours, one, "split at {} and {}", i, j);
                    }
                }
            }
        }

        /// Typed writes mixed with byte writes hash as siphasher hashes them.
        #[test]
        fn typed_writes_hash_as_siphasher(
            k0 in any::<u64>(),
            k1 in any::<u64>(),
            writes in proptest::collection::vec(write(), 0..12),
        ) {
            for (ours, theirs) in both_writes(k0, k1, &writes) {
                prop_assert_eq!(ours, theirs);
            }
        }
    }
}
