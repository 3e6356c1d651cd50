//! CoRE Link Format (RFC 6690): zero-copy parsing, serialisation into caller buffers, and the
//! `/.well-known/core` query filter.
//!
//! ```
//! use covey_core::link_format::{links, LinkWriter, QueryFilter, SliceWriter};
//!
//! let text = r#"</sensors/temp>;rt="temperature-c";ct=0;obs,</actuators/led>;if="core.a""#;
//! let link = links(text).next().unwrap().unwrap();
//! assert_eq!(link.target(), "/sensors/temp");
//! assert!(link.attribute("rt").unwrap().value.unwrap().unquoted_eq("temperature-c"));
//!
//! let filter = QueryFilter::parse("rt=temp*").unwrap();
//! assert!(filter.matches(&link));
//!
//! let mut buf = [0u8; 64];
//! let mut w = LinkWriter::new(SliceWriter::new(&mut buf));
//! w.link("/sensors/temp").unwrap().attr_u32("ct", 0).unwrap().attr("obs").unwrap();
//! assert_eq!(w.get_ref().as_str(), "</sensors/temp>;ct=0;obs");
//! ```

mod attribute;
mod error;
mod filter;
mod grammar;
mod link;
mod parse;
mod pattern;
mod slice_writer;
mod value;
mod write;

#[cfg(test)]
mod proptests;

pub use attribute::{Attribute, Attributes};
pub use error::{LinkFormatError, LinkFormatErrorKind};
pub use filter::{filter_links, QueryFilter};
pub use link::Link;
pub use parse::{links, validate, Links};
pub use pattern::MAX_PATTERN_LEN;
pub use slice_writer::{BufferTooSmall, SliceWriter};
pub use value::{AttrValue, Tokens, Unescaped};
pub use write::{LinkWriter, WriteError};

/// The resource set of the spec's filter vectors (§8.2), as printed there.
#[cfg(test)]
pub(crate) const SPEC_RESOURCES: &str =
    "</sensors/temp>;rt=\"temperature-c\";if=\"sensor\";ct=0;obs,
</sensors/light>;rt=\"light-lux core.s\";if=\"sensor\";ct=50,
</actuators/led>;rt=\"light-ctrl\";if=\"core.a\"";
