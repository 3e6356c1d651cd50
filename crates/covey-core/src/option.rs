//! Options of a parsed message: the delta/length header (RFC 7252 §3.1) and an iterator.

use crate::{OptionNumber, ParseError, ParseErrorKind, PAYLOAD_MARKER};

/// One option of a parsed message, borrowing its value from the datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoapOption<'a> {
    /// The option number.
    pub number: OptionNumber,
    /// The raw value bytes.
    pub value: &'a [u8],
}

impl<'a> CoapOption<'a> {
    /// The value as an unsigned integer (leading zeros accepted), if it fits in 32 bits.
    pub fn value_uint(&self) -> Option<u32> {
        crate::uint::decode(self.value)
    }

    /// The value as UTF-8 text, if it is valid UTF-8.
    pub fn value_str(&self) -> Option<&'a str> {
        core::str::from_utf8(self.value).ok()
    }
}

/// One option header decoded from the wire: delta, value range, and where the next one starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawOption {
    pub delta: u32,
    pub value_start: usize,
    pub value_end: usize,
}

/// Reads the extended delta or length for `nibble` at `pos`; returns the value and bytes used.
#[inline(always)]
fn extended(nibble: u8, buf: &[u8], pos: usize) -> Option<(u32, usize)> {
    match nibble {
        0..=12 => Some((nibble as u32, 0)),
        13 => buf.get(pos).map(|&b| (b as u32 + 13, 1)),
        14 => match (buf.get(pos), buf.get(pos + 1)) {
            (Some(&hi), Some(&lo)) => Some((u16::from_be_bytes([hi, lo]) as u32 + 269, 2)),
            _ => None,
        },
        _ => None,
    }
}

/// Decodes the option starting at `pos` (not the payload marker). `base` is the datagram
/// offset of `buf`, for error positions.
#[inline(always)]
pub(crate) fn decode_option(buf: &[u8], pos: usize, base: usize) -> Result<RawOption, ParseError> {
    let err = |kind| ParseError {
        kind,
        offset: base + pos,
    };
    let first = buf[pos];
    let delta_nibble = first >> 4;
    let len_nibble = first & 0x0F;
    if delta_nibble == 15 {
        return Err(err(ParseErrorKind::ReservedDeltaNibble));
    }
    if len_nibble == 15 {
        return Err(err(ParseErrorKind::ReservedLengthNibble));
    }
    let mut p = pos + 1;
    let (delta, used) =
        extended(delta_nibble, buf, p).ok_or_else(|| err(ParseErrorKind::TruncatedOption))?;
    p += used;
    let (len, used) =
        extended(len_nibble, buf, p).ok_or_else(|| err(ParseErrorKind::TruncatedOption))?;
    p += used;
    let end = p + len as usize;
    if end > buf.len() {
        return Err(err(ParseErrorKind::TruncatedOption));
    }
    Ok(RawOption {
        delta,
        value_start: p,
        value_end: end,
    })
}

/// Iterates the options of a parsed message in wire order.
#[derive(Debug, Clone)]
pub struct OptionIter<'a> {
    buf: &'a [u8],
    pos: usize,
    number: u32,
}

impl<'a> OptionIter<'a> {
    /// Iterates options encoded in `buf` (already validated by [`crate::Message::parse`]).
    pub(crate) fn new(buf: &'a [u8]) -> OptionIter<'a> {
        OptionIter {
            buf,
            pos: 0,
            number: 0,
        }
    }
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = CoapOption<'a>;

    // Inlined on hosts, where every datagram's options go through it; one copy called on
    // bare-metal targets, where each inlined copy costs a node's flash.
    #[cfg_attr(not(target_os = "none"), inline)]
    #[cfg_attr(target_os = "none", inline(never))]
    fn next(&mut self) -> Option<CoapOption<'a>> {
        if self.pos >= self.buf.len() || self.buf[self.pos] == PAYLOAD_MARKER {
            return None;
        }
        // The region was validated at parse time; stop quietly should that ever not hold.
        let raw = decode_option(self.buf, self.pos, 0).ok()?;
        self.number += raw.delta;
        self.pos = raw.value_end;
        Some(CoapOption {
            number: OptionNumber(u16::try_from(self.number).ok()?),
            value: &self.buf[raw.value_start..raw.value_end],
        })
    }
}
