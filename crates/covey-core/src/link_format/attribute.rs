//! Link attributes (RFC 6690 §3 target attributes, RFC 5988 link-params) and their iterator.

use super::grammar::skip_space;
use super::parse::scan_param;
use super::AttrValue;

/// One link-param: a name and, unless it is a flag like `obs`, a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Attribute<'a> {
    /// The parameter name as written (names compare case-insensitively).
    pub name: &'a str,
    /// The value, or `None` for a flag attribute.
    pub value: Option<AttrValue<'a>>,
}

impl<'a> Attribute<'a> {
    /// Whether this attribute is called `name`, ignoring ASCII case.
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }
}

/// Iterator over the attributes of a [`Link`](super::Link), in order of appearance.
#[derive(Debug, Clone)]
pub struct Attributes<'a> {
    params: &'a str,
    pos: usize,
}

impl<'a> Attributes<'a> {
    /// Iterates over already validated link-params (`*( OWS ";" OWS link-param )`).
    pub(crate) const fn new(params: &'a str) -> Attributes<'a> {
        Attributes { params, pos: 0 }
    }
}

impl<'a> Iterator for Attributes<'a> {
    type Item = Attribute<'a>;

    fn next(&mut self) -> Option<Attribute<'a>> {
        let bytes = self.params.as_bytes();
        let semi = skip_space(bytes, self.pos);
        if bytes.get(semi) != Some(&b';') {
            self.pos = bytes.len();
            return None;
        }
        match scan_param(self.params, skip_space(bytes, semi + 1)) {
            Ok((attribute, end)) => {
                self.pos = end;
                Some(attribute)
            }
            // Unreachable for params the parser accepted; end quietly rather than panic.
            Err(_) => {
                self.pos = bytes.len();
                None
            }
        }
    }
}

impl core::iter::FusedIterator for Attributes<'_> {}
