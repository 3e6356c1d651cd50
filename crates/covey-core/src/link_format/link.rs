//! One parsed link-value: its target URI-Reference and its attributes.

use super::{Attribute, Attributes};

/// A link-value borrowing the parsed text: `<target>;attr;attr=value...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Link<'a> {
    raw: &'a str,
    target: &'a str,
    params: &'a str,
    offset: usize,
}

impl<'a> Link<'a> {
    /// Wraps a link-value the parser has already validated.
    pub(crate) const fn new(raw: &'a str, target: &'a str, params: &'a str, offset: usize) -> Self {
        Link {
            raw,
            target,
            params,
            offset,
        }
    }

    /// The URI-Reference between `<` and `>`, as written.
    pub const fn target(&self) -> &'a str {
        self.target
    }

    /// The whole link-value as written, without surrounding whitespace or commas.
    pub const fn raw(&self) -> &'a str {
        self.raw
    }

    /// Byte offset of the link's `<` in the parsed text.
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// The attributes in order of appearance.
    pub const fn attributes(&self) -> Attributes<'a> {
        Attributes::new(self.params)
    }

    /// The first attribute called `name` (ASCII case ignored), if any.
    pub fn attribute(&self, name: &str) -> Option<Attribute<'a>> {
        self.attributes().find(|a| a.is(name))
    }

    /// Whether the link has an attribute called `name`, with or without a value.
    pub fn has_attribute(&self, name: &str) -> bool {
        self.attribute(name).is_some()
    }
}

impl core::fmt::Display for Link<'_> {
    /// The link-value as written.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.raw)
    }
}
