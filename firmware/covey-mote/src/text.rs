//! Text formatted on the stack, for payloads and log lines (no heap, no `String`).

/// Text written into `N` bytes on the stack; what does not fit is refused.
pub struct Text<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Text<N> {
    pub const fn new() -> Self {
        Text {
            buf: [0; N],
            len: 0,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Appends `s`; false (and nothing appended) when it does not fit.
    pub fn push(&mut self, s: &[u8]) -> bool {
        let end = self.len + s.len();
        match self.buf.get_mut(self.len..end) {
            Some(slot) => {
                slot.copy_from_slice(s);
                self.len = end;
                true
            }
            None => false,
        }
    }

    /// Appends `n` in decimal. Digits are written by hand: `core::fmt`'s machinery would
    /// cost the mote kilobytes of flash.
    pub fn decimal(&mut self, n: u64) -> bool {
        self.digits(n, 10)
    }

    /// Appends `n` in lower-case hexadecimal without leading zeros (`/mc`'s addresses).
    #[cfg(feature = "multicast")]
    pub fn hex(&mut self, n: u16) -> bool {
        self.digits(u64::from(n), 16)
    }

    fn digits(&mut self, mut n: u64, radix: u32) -> bool {
        let mut digits = [0u8; 20];
        let mut start = digits.len();
        loop {
            start -= 1;
            // In 32-bit divisions: a 64-bit one links a software routine of about 1 KiB.
            let (rest, digit) = covey_proto::time::div_rem_small(n, radix);
            digits[start] = b"0123456789abcdef"[digit as usize];
            n = rest;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[start..])
    }
}

/// For the panic message (`panic-message` feature) only.
impl<const N: usize> core::fmt::Write for Text<N> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.push(s.as_bytes())
            .then_some(())
            .ok_or(core::fmt::Error)
    }
}
