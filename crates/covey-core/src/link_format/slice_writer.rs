//! A `core::fmt::Write` over a caller's byte buffer that fails instead of overflowing.

use core::fmt;

/// The buffer has no room for the text to be appended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferTooSmall;

impl fmt::Display for BufferTooSmall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("output buffer too small")
    }
}

impl core::error::Error for BufferTooSmall {}

/// Text written into a borrowed `&mut [u8]`; always valid UTF-8 up to [`len`](Self::len).
#[derive(Debug)]
pub struct SliceWriter<'b> {
    buf: &'b mut [u8],
    len: usize,
    overflowed: bool,
}

impl<'b> SliceWriter<'b> {
    /// An empty writer over `buf`.
    pub fn new(buf: &'b mut [u8]) -> SliceWriter<'b> {
        SliceWriter {
            buf,
            len: 0,
            overflowed: false,
        }
    }

    /// Appends `s` whole, or nothing and `BufferTooSmall` if it does not fit.
    pub fn push_str(&mut self, s: &str) -> Result<(), BufferTooSmall> {
        let end = self.len.checked_add(s.len()).ok_or(BufferTooSmall)?;
        match self.buf.get_mut(self.len..end) {
            Some(dst) => {
                dst.copy_from_slice(s.as_bytes());
                self.len = end;
                Ok(())
            }
            None => {
                self.overflowed = true;
                Err(BufferTooSmall)
            }
        }
    }

    /// Bytes written so far.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing has been written.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size of the underlying buffer.
    pub const fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Whether a write was refused for lack of room since creation or the last [`clear`](Self::clear).
    pub const fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// `Err(BufferTooSmall)` if any write was refused, else the byte count.
    pub const fn result(&self) -> Result<usize, BufferTooSmall> {
        if self.overflowed {
            Err(BufferTooSmall)
        } else {
            Ok(self.len)
        }
    }

    /// Forgets what was written.
    pub fn clear(&mut self) {
        self.len = 0;
        self.overflowed = false;
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// The text written so far.
    pub fn as_str(&self) -> &str {
        // Only whole `&str`s are ever appended, so this cannot fail.
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    /// The text written, borrowing the buffer for its full lifetime.
    pub fn into_str(self) -> &'b str {
        let buf: &'b [u8] = self.buf;
        core::str::from_utf8(buf.get(..self.len).unwrap_or(&[])).unwrap_or("")
    }
}

impl fmt::Write for SliceWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s).map_err(|_| fmt::Error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn refuses_whole_pieces_so_text_stays_utf8() {
        let mut buf = [0u8; 8];
        let mut w = SliceWriter::new(&mut buf);
        assert_eq!(w.push_str("abc"), Ok(()));
        assert_eq!(w.push_str("défgh"), Err(BufferTooSmall)); // 6 bytes, 5 left
        assert_eq!(w.as_str(), "abc");
        assert_eq!(w.push_str("défg"), Ok(()));
        assert_eq!(w.as_str(), "abcdéfg");
    }

    #[test]
    fn reports_buffer_too_small() {
        let mut buf = [0u8; 5];
        let mut w = SliceWriter::new(&mut buf);
        assert!(write!(w, "{}", 1234).is_ok());
        assert!(!w.overflowed());
        assert!(write!(w, "{}", 56).is_err());
        assert!(w.overflowed());
        assert_eq!(w.result(), Err(BufferTooSmall));
        assert_eq!(w.as_str(), "1234");
        assert_eq!(w.len(), 4);
        w.clear();
        assert!(w.is_empty() && !w.overflowed());
        assert_eq!(w.push_str("12345"), Ok(()));
        assert_eq!(w.push_str(""), Ok(()));
        assert_eq!(w.capacity(), 5);
        assert_eq!(w.into_str(), "12345");
    }

    #[test]
    fn zero_sized_buffer() {
        let mut w = SliceWriter::new(&mut []);
        assert_eq!(w.push_str(""), Ok(()));
        assert_eq!(w.push_str("x"), Err(BufferTooSmall));
        assert_eq!(w.as_str(), "");
    }
}
