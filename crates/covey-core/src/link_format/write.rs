//! Serialisation of link format into any `core::fmt::Write`, checked so that the output parses.

use core::fmt::{self, Write};

use super::grammar::{is_name, is_ptoken, is_quotable_byte, is_target};
use super::{AttrValue, Link};

/// Why a link or attribute could not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteError {
    /// The output refused the text (for a [`SliceWriter`](super::SliceWriter): the buffer is full).
    BufferTooSmall,
    /// The target holds a space, control character, `"`, `<` or `>`.
    InvalidTarget,
    /// The attribute name is not `1*attr-char ["*"]`.
    InvalidName,
    /// The value is not a ptoken (for `attr_token`) or holds a control character.
    InvalidValue,
    /// An attribute was written before any link.
    NoLink,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WriteError::BufferTooSmall => "output buffer too small",
            WriteError::InvalidTarget => {
                "link target cannot hold a space, control character, '\"', '<' or '>'"
            }
            WriteError::InvalidName => "attribute name is not a link-param name",
            WriteError::InvalidValue => "attribute value is not a ptoken or quotable text",
            WriteError::NoLink => "attribute written before any link",
        })
    }
}

impl core::error::Error for WriteError {}

impl From<fmt::Error> for WriteError {
    fn from(_: fmt::Error) -> WriteError {
        WriteError::BufferTooSmall
    }
}

/// Writes a link-value list: `link` starts each link-value, the `attr*` calls add link-params.
///
/// Each call checks its input before writing anything, so the output always parses; after a
/// `BufferTooSmall` the output may end inside a link and should be discarded.
#[derive(Debug)]
pub struct LinkWriter<W> {
    out: W,
    count: usize,
    separator: &'static str,
}

impl<W: Write> LinkWriter<W> {
    /// A writer emitting the compact form, links separated by `,` alone.
    pub const fn new(out: W) -> LinkWriter<W> {
        LinkWriter {
            out,
            count: 0,
            separator: ",",
        }
    }

    /// A writer breaking the line after each `,`, as RFC 6690's examples are printed.
    pub const fn multiline(out: W) -> LinkWriter<W> {
        LinkWriter {
            out,
            count: 0,
            separator: ",\n",
        }
    }

    /// Starts a new link-value `<target>`.
    pub fn link(&mut self, target: &str) -> Result<&mut Self, WriteError> {
        if !is_target(target) {
            return Err(WriteError::InvalidTarget);
        }
        self.separate()?;
        self.out.write_char('<')?;
        self.out.write_str(target)?;
        self.out.write_char('>')?;
        Ok(self)
    }

    /// Adds a flag attribute with no value, such as `obs`.
    pub fn attr(&mut self, name: &str) -> Result<&mut Self, WriteError> {
        self.name(name)?;
        Ok(self)
    }

    /// Adds `name=value` with `value` unquoted (a ptoken such as `0` or `1024`).
    pub fn attr_token(&mut self, name: &str, value: &str) -> Result<&mut Self, WriteError> {
        if !is_ptoken(value) {
            return Err(WriteError::InvalidValue);
        }
        self.name(name)?;
        self.out.write_char('=')?;
        self.out.write_str(value)?;
        Ok(self)
    }

    /// Adds `name=value` with a decimal number, such as `ct=50` or `sz=1024`.
    pub fn attr_u32(&mut self, name: &str, value: u32) -> Result<&mut Self, WriteError> {
        self.name(name)?;
        write!(self.out, "={value}")?;
        Ok(self)
    }

    /// Adds `name="value"`, escaping `"` and `\`; control characters other than HTAB are refused.
    pub fn attr_quoted(&mut self, name: &str, value: &str) -> Result<&mut Self, WriteError> {
        if !value.bytes().all(is_quotable_byte) {
            return Err(WriteError::InvalidValue);
        }
        self.name(name)?;
        self.out.write_str("=\"")?;
        let mut start = 0;
        for (i, b) in value.bytes().enumerate() {
            if b == b'"' || b == b'\\' {
                self.out.write_str(value.get(start..i).unwrap_or(""))?;
                self.out.write_char('\\')?;
                // The special character itself starts the next run.
                start = i;
            }
        }
        self.out.write_str(value.get(start..).unwrap_or(""))?;
        self.out.write_char('"')?;
        Ok(self)
    }

    /// Adds `name=value` copying a parsed value as written (quoted or not).
    pub fn attr_value(
        &mut self,
        name: &str,
        value: AttrValue<'_>,
    ) -> Result<&mut Self, WriteError> {
        self.name(name)?;
        self.out.write_char('=')?;
        self.out.write_str(value.raw())?;
        Ok(self)
    }

    /// Copies a parsed link-value as written; more attributes may follow.
    pub fn copy_link(&mut self, link: &Link<'_>) -> Result<&mut Self, WriteError> {
        self.separate()?;
        self.out.write_str(link.raw())?;
        Ok(self)
    }

    /// Links started so far.
    pub const fn count(&self) -> usize {
        self.count
    }

    /// The output.
    pub const fn get_ref(&self) -> &W {
        &self.out
    }

    /// The output, mutably.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Ends writing and returns the output.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn separate(&mut self) -> Result<(), WriteError> {
        if self.count > 0 {
            self.out.write_str(self.separator)?;
        }
        self.count += 1;
        Ok(())
    }

    fn name(&mut self, name: &str) -> Result<(), WriteError> {
        if self.count == 0 {
            return Err(WriteError::NoLink);
        }
        if !is_name(name) {
            return Err(WriteError::InvalidName);
        }
        self.out.write_char(';')?;
        self.out.write_str(name)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link_format::{links, validate, SliceWriter, SPEC_RESOURCES};
    use std::string::String;
    use std::vec::Vec;

    fn spec_set<W: Write>(w: &mut LinkWriter<W>) -> Result<(), WriteError> {
        w.link("/sensors/temp")?
            .attr_quoted("rt", "temperature-c")?
            .attr_quoted("if", "sensor")?
            .attr_u32("ct", 0)?
            .attr("obs")?;
        w.link("/sensors/light")?
            .attr_quoted("rt", "light-lux core.s")?
            .attr_quoted("if", "sensor")?
            .attr_token("ct", "50")?;
        w.link("/actuators/led")?
            .attr_quoted("rt", "light-ctrl")?
            .attr_quoted("if", "core.a")?;
        Ok(())
    }

    #[test]
    fn reproduces_the_spec_resource_set() {
        let mut w = LinkWriter::multiline(String::new());
        spec_set(&mut w).unwrap();
        assert_eq!(w.count(), 3);
        assert_eq!(w.into_inner(), SPEC_RESOURCES);

        let mut buf = [0u8; 256];
        let mut w = LinkWriter::new(SliceWriter::new(&mut buf));
        spec_set(&mut w).unwrap();
        assert_eq!(w.get_ref().as_str(), SPEC_RESOURCES.replace('\n', ""));
    }

    #[test]
    fn round_trip_parse_write_parse() {
        let mut out = String::new();
        let mut w = LinkWriter::new(&mut out);
        for link in links(SPEC_RESOURCES) {
            let link = link.unwrap();
            w.link(link.target()).unwrap();
            for a in link.attributes() {
                match a.value {
                    None => w.attr(a.name),
                    Some(v) if v.is_quoted() => {
                        let mut s = String::new();
                        v.write_unquoted(&mut s).unwrap();
                        w.attr_quoted(a.name, &s)
                    }
                    Some(v) => w.attr_token(a.name, v.raw()),
                }
                .unwrap();
            }
        }
        assert_eq!(out, SPEC_RESOURCES.replace('\n', ""));
        let again: Vec<_> = links(&out).map(|l| l.unwrap().raw()).collect();
        let first: Vec<_> = links(SPEC_RESOURCES).map(|l| l.unwrap().raw()).collect();
        assert_eq!(again, first);
    }

    #[test]
    fn quoted_values_are_escaped() {
        let mut out = String::new();
        LinkWriter::new(&mut out)
            .link("/q")
            .unwrap()
            .attr_quoted("title", r#"a "b", c\d"#)
            .unwrap();
        assert_eq!(out, r#"</q>;title="a \"b\", c\\d""#);
        let link = links(&out).next().unwrap().unwrap();
        assert!(link
            .attribute("title")
            .unwrap()
            .value
            .unwrap()
            .unquoted_eq(r#"a "b", c\d"#));
    }

    #[test]
    fn copies_parsed_links_and_values() {
        let parsed = links(SPEC_RESOURCES).nth(1).unwrap().unwrap();
        let mut out = String::new();
        let mut w = LinkWriter::new(&mut out);
        w.copy_link(&parsed).unwrap().attr("obs").unwrap();
        let rt = parsed.attribute("rt").unwrap().value.unwrap();
        w.link("/x").unwrap().attr_value("rt", rt).unwrap();
        assert_eq!(
            out,
            r#"</sensors/light>;rt="light-lux core.s";if="sensor";ct=50;obs,</x>;rt="light-lux core.s""#
        );
        assert_eq!(validate(&out), Ok(2));
    }

    #[test]
    fn refuses_what_would_not_parse() {
        let mut out = String::new();
        let mut w = LinkWriter::new(&mut out);
        assert_eq!(w.attr("obs").err(), Some(WriteError::NoLink));
        assert_eq!(w.link("/a b").err(), Some(WriteError::InvalidTarget));
        assert_eq!(w.link("/a>").err(), Some(WriteError::InvalidTarget));
        w.link("/a").unwrap();
        assert_eq!(w.attr("").err(), Some(WriteError::InvalidName));
        assert_eq!(w.attr("a=b").err(), Some(WriteError::InvalidName));
        assert_eq!(w.attr_token("ct", "").err(), Some(WriteError::InvalidValue));
        assert_eq!(
            w.attr_token("ct", "0 41").err(),
            Some(WriteError::InvalidValue)
        );
        assert_eq!(
            w.attr_quoted("t", "a\nb").err(),
            Some(WriteError::InvalidValue)
        );
        w.attr("title*").unwrap();
        assert_eq!(out, "</a>;title*");
    }

    #[test]
    fn slice_writer_reports_buffer_too_small() {
        let mut buf = [0u8; 20];
        let mut w = LinkWriter::new(SliceWriter::new(&mut buf));
        w.link("/sensors/temp").unwrap().attr_u32("ct", 0).unwrap();
        assert_eq!(w.get_ref().as_str(), "</sensors/temp>;ct=0");
        assert_eq!(w.attr("obs").err(), Some(WriteError::BufferTooSmall));
        assert!(w.get_ref().overflowed());
        let full = w.into_inner();
        assert_eq!(full.result(), Err(crate::link_format::BufferTooSmall));
    }
}
