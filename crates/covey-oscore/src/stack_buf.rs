//! A byte buffer of fixed capacity on the stack, for the small CBOR structures and option
//! values built for every message, so protecting one allocates nothing.

/// Up to `N` bytes; writing past them marks it overflowed instead of growing.
pub(crate) struct StackBuf<const N: usize> {
    bytes: [u8; N],
    len: usize,
    overflowed: bool,
}

impl<const N: usize> StackBuf<N> {
    /// An empty buffer.
    pub(crate) fn new() -> StackBuf<N> {
        StackBuf {
            bytes: [0; N],
            len: 0,
            overflowed: false,
        }
    }

    /// What was written, or `None` if it did not all fit.
    pub(crate) fn written(&self) -> Option<&[u8]> {
        (!self.overflowed).then_some(&self.bytes[..self.len])
    }
}

/// Where CBOR items and option bytes are written: a growable vector or a [`StackBuf`].
pub(crate) trait ByteSink {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);
}

impl ByteSink for alloc::vec::Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl<const N: usize> ByteSink for StackBuf<N> {
    fn put(&mut self, bytes: &[u8]) {
        match self.bytes.get_mut(self.len..self.len + bytes.len()) {
            Some(room) if !self.overflowed => {
                room.copy_from_slice(bytes);
                self.len += bytes.len();
            }
            _ => self.overflowed = true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_beyond_the_capacity_overflow_it() {
        let mut buf = StackBuf::<3>::new();
        buf.put(&[1, 2]);
        assert_eq!(buf.written(), Some(&[1, 2][..]));
        buf.put(&[3, 4]);
        assert_eq!(buf.written(), None);
        buf.put(&[]);
        assert_eq!(buf.written(), None);
    }
}
