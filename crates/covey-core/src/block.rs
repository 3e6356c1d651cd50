//! Block1/Block2 option values (RFC 7959 §2.2).

use crate::uint;

/// A block option value: block number, more flag and size exponent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Block {
    /// Block number (NUM), below 2^20.
    pub num: u32,
    /// More blocks follow (M).
    pub more: bool,
    /// Size exponent (SZX): the block size is 2^(SZX+4); 0–6, 7 is reserved.
    pub szx: u8,
}

/// Why a block value cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockError {
    /// The option is longer than 3 bytes.
    TooLong,
    /// SZX 7, which RFC 7959 reserves (a request carrying it gets 4.00).
    ReservedSzx,
    /// NUM does not fit in 20 bits.
    NumTooLarge,
}

impl core::fmt::Display for BlockError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            BlockError::TooLong => "block option longer than 3 bytes",
            BlockError::ReservedSzx => "block size exponent 7 is reserved",
            BlockError::NumTooLarge => "block number does not fit in 20 bits",
        })
    }
}

impl core::error::Error for BlockError {}

impl Block {
    /// Largest block number the 3-byte option can carry.
    pub const MAX_NUM: u32 = (1 << 20) - 1;

    /// A block value; fails for SZX 7 or NUM ≥ 2^20.
    pub const fn new(num: u32, more: bool, szx: u8) -> Result<Block, BlockError> {
        if szx > 6 {
            return Err(BlockError::ReservedSzx);
        }
        if num > Self::MAX_NUM {
            return Err(BlockError::NumTooLarge);
        }
        Ok(Block { num, more, szx })
    }

    /// The SZX whose block size is the largest power of two not above `size` (16–1024 bytes).
    pub const fn szx_for_size(size: usize) -> u8 {
        let mut szx = 6u8;
        while szx > 0 && (16usize << szx) > size {
            szx -= 1;
        }
        szx
    }

    /// Block size in bytes (16–1024).
    pub const fn size(self) -> usize {
        16 << self.szx
    }

    /// Byte offset of this block in the body.
    pub const fn offset(self) -> usize {
        self.num as usize * self.size()
    }

    /// The numeric option value `NUM<<4 | M<<3 | SZX`.
    pub const fn to_value(self) -> u32 {
        (self.num << 4) | ((self.more as u32) << 3) | self.szx as u32
    }

    /// Writes the option value in the fewest bytes (an empty option for block 0/0/0).
    pub fn encode(self, out: &mut [u8; 4]) -> &[u8] {
        uint::encode(self.to_value(), out)
    }

    /// Reads an option value; rejects values longer than 3 bytes and SZX 7.
    pub fn decode(bytes: &[u8]) -> Result<Block, BlockError> {
        let v = uint::decode(bytes).ok_or(BlockError::TooLong)?;
        if v > 0xFF_FFFF {
            return Err(BlockError::TooLong);
        }
        Block::new(v >> 4, v & 0x8 != 0, (v & 0x7) as u8)
    }

    /// The same position expressed at a smaller size exponent (RFC 7959 §2.5 rescaling).
    pub const fn rescaled(self, szx: u8) -> Block {
        if szx >= self.szx {
            return self;
        }
        Block {
            num: self.num << (self.szx - szx),
            more: self.more,
            szx,
        }
    }
}

impl core::fmt::Display for Block {
    /// libcoap's and Wireshark's form: `NUM/M/SIZE`.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}/{}/{}", self.num, self.more as u8, self.size())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(b: Block) -> std::vec::Vec<u8> {
        let mut buf = [0; 4];
        b.encode(&mut buf).to_vec()
    }

    #[test]
    fn spec_vectors_b1_to_b4() {
        // B1
        assert!(enc(Block::new(0, false, 0).unwrap()).is_empty());
        // B2
        let b2 = Block::new(0, true, 6).unwrap();
        assert_eq!(enc(b2), [0x0E]);
        assert_eq!((b2.size(), b2.offset()), (1024, 0));
        // B3
        let b3 = Block::new(3, true, 2).unwrap();
        assert_eq!(enc(b3), [0x3A]);
        assert_eq!((b3.size(), b3.offset()), (64, 192));
        // B4
        let b4 = Block::new(20, false, 6).unwrap();
        assert_eq!(enc(b4), [0x01, 0x46]);
        assert_eq!(b4.offset(), 20480);
        assert_eq!(Block::decode(&[0x01, 0x46]), Ok(b4));
    }

    #[test]
    fn b7_rescaling() {
        // Block 0 was sent at SZX 6; the server asks for SZX 4: the next block is 1024/256 = 4.
        let next = Block::new(1, true, 6).unwrap().rescaled(4);
        assert_eq!((next.num, next.szx, next.offset()), (4, 4, 1024));
    }

    #[test]
    fn rejects_reserved_and_oversized() {
        assert_eq!(Block::decode(&[0x07]), Err(BlockError::ReservedSzx));
        assert_eq!(Block::decode(&[1, 0, 0, 0]), Err(BlockError::TooLong));
        assert_eq!(Block::new(1 << 20, false, 0), Err(BlockError::NumTooLarge));
        assert_eq!(Block::szx_for_size(1024), 6);
        assert_eq!(Block::szx_for_size(1000), 5);
        assert_eq!(Block::szx_for_size(3), 0);
    }
}
