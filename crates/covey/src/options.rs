//! An owned list of CoAP options, in the order they were added (repeats keep their order).

use covey_core::{uint, CoapOption, ContentFormat, Message, OptionNumber};

/// Owned CoAP options; the encoder sorts them by number, keeping repeated options in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    list: Vec<(OptionNumber, Vec<u8>)>,
}

impl Options {
    /// No options.
    pub fn new() -> Options {
        Options::default()
    }

    /// The options of a parsed message, in wire order.
    pub fn from_message(message: &Message<'_>) -> Options {
        Options {
            list: message
                .options()
                .map(|o| (o.number, o.value.to_vec()))
                .collect(),
        }
    }

    /// Adds an option (after any others of the same number).
    pub fn push(&mut self, number: OptionNumber, value: impl Into<Vec<u8>>) {
        self.list.push((number, value.into()));
    }

    /// Adds an option holding an unsigned integer in its shortest form.
    pub fn push_uint(&mut self, number: OptionNumber, value: u32) {
        let mut buf = [0u8; 4];
        self.push(number, uint::encode(value, &mut buf));
    }

    /// Replaces every option of `number` with one holding `value`.
    pub fn set(&mut self, number: OptionNumber, value: impl Into<Vec<u8>>) {
        self.remove(number);
        self.push(number, value);
    }

    /// Replaces every option of `number` with one holding the unsigned integer `value`.
    pub fn set_uint(&mut self, number: OptionNumber, value: u32) {
        self.remove(number);
        self.push_uint(number, value);
    }

    /// Removes every option of `number`.
    pub fn remove(&mut self, number: OptionNumber) {
        self.list.retain(|(n, _)| *n != number);
    }

    /// The first value of `number`.
    pub fn get(&self, number: OptionNumber) -> Option<&[u8]> {
        self.get_all(number).next()
    }

    /// Every value of `number`, in order.
    pub fn get_all(&self, number: OptionNumber) -> impl Iterator<Item = &[u8]> + '_ {
        self.list
            .iter()
            .filter(move |(n, _)| *n == number)
            .map(|(_, v)| v.as_slice())
    }

    /// Whether an option of `number` is present.
    pub fn contains(&self, number: OptionNumber) -> bool {
        self.get(number).is_some()
    }

    /// The first value of `number` as an unsigned integer.
    pub fn uint(&self, number: OptionNumber) -> Option<u32> {
        self.get(number).and_then(uint::decode)
    }

    /// The Content-Format option.
    pub fn content_format(&self) -> Option<ContentFormat> {
        self.uint(OptionNumber::CONTENT_FORMAT)
            .and_then(|v| u16::try_from(v).ok())
            .map(ContentFormat)
    }

    /// The Accept option.
    pub fn accept(&self) -> Option<ContentFormat> {
        self.uint(OptionNumber::ACCEPT)
            .and_then(|v| u16::try_from(v).ok())
            .map(ContentFormat)
    }

    /// The Observe option.
    pub fn observe(&self) -> Option<u32> {
        self.uint(OptionNumber::OBSERVE)
    }

    /// Uri-Path segments (invalid UTF-8 shown lossily).
    pub fn path_segments(&self) -> impl Iterator<Item = String> + '_ {
        self.get_all(OptionNumber::URI_PATH)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// The path as `/a/b` (`/` when there is none).
    pub fn path(&self) -> String {
        let mut path = String::new();
        for segment in self.get_all(OptionNumber::URI_PATH) {
            path.push('/');
            path.push_str(&String::from_utf8_lossy(segment));
        }
        if path.is_empty() {
            path.push('/');
        }
        path
    }

    /// Uri-Query arguments (invalid UTF-8 shown lossily).
    pub fn queries(&self) -> impl Iterator<Item = String> + '_ {
        self.get_all(OptionNumber::URI_QUERY)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// The value of query argument `name=value`; `Some("")` for a bare `name`.
    pub fn query(&self, name: &str) -> Option<String> {
        self.queries().find_map(|q| match q.split_once('=') {
            Some((n, v)) if n == name => Some(v.to_string()),
            None if q == name => Some(String::new()),
            _ => None,
        })
    }

    /// Every option as (number, value), in order.
    pub fn iter(&self) -> impl Iterator<Item = (OptionNumber, &[u8])> + '_ {
        self.list.iter().map(|(n, v)| (*n, v.as_slice()))
    }

    /// Number of options.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Calls `f` with the options borrowed for the engine; a short list is lent from the
    /// stack, so answering a request allocates nothing here.
    pub(crate) fn with_coap<R>(&self, f: impl FnOnce(&[CoapOption<'_>]) -> R) -> R {
        const INLINE: usize = 16;
        fn coap((number, value): &(OptionNumber, Vec<u8>)) -> CoapOption<'_> {
            CoapOption {
                number: *number,
                value,
            }
        }
        if self.list.len() <= INLINE {
            let mut inline = [CoapOption {
                number: OptionNumber(0),
                value: &[],
            }; INLINE];
            for (slot, option) in inline.iter_mut().zip(&self.list) {
                *slot = coap(option);
            }
            f(&inline[..self.list.len()])
        } else {
            let all: Vec<CoapOption<'_>> = self.list.iter().map(coap).collect();
            f(&all)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_queries_and_numbers() {
        let mut o = Options::new();
        o.push(OptionNumber::URI_PATH, "a");
        o.push(OptionNumber::URI_PATH, "b");
        o.push(OptionNumber::URI_QUERY, "rt=x");
        o.push(OptionNumber::URI_QUERY, "obs");
        o.push_uint(OptionNumber::CONTENT_FORMAT, 50);
        assert_eq!(o.path(), "/a/b");
        assert_eq!(o.query("rt").as_deref(), Some("x"));
        assert_eq!(o.query("obs").as_deref(), Some(""));
        assert_eq!(o.query("if"), None);
        assert_eq!(o.content_format(), Some(ContentFormat::JSON));
        o.set_uint(OptionNumber::CONTENT_FORMAT, 0);
        assert_eq!(o.get(OptionNumber::CONTENT_FORMAT), Some(&[][..]));
        assert_eq!(Options::new().path(), "/");
        let numbers = o.with_coap(|c| c.iter().map(|o| o.number.0).collect::<Vec<_>>());
        assert_eq!(numbers, vec![11, 11, 15, 15, 12]);
        let mut many = Options::new();
        for i in 0..40u8 {
            many.push(OptionNumber::URI_QUERY, vec![i]);
        }
        assert_eq!(many.with_coap(|c| c.len()), 40);
    }
}
