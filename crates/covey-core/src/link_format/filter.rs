//! Query filtering of `/.well-known/core` (RFC 6690 §4.1), with several filters ANDed as the
//! Resource Directory does.

use core::fmt;

use super::pattern::Pattern;
use super::value::Unescaped;
use super::{links, validate, Link, LinkFormatError, LinkFormatErrorKind as Kind, LinkWriter};

/// Attributes whose values are space-separated lists: a filter matches any one element.
const LIST_VALUED: [&str; 5] = ["rt", "if", "rel", "rev", "ct"];

/// One `name=pattern` Uri-Query filter, or a bare `name` asking for a flag such as `obs`.
#[derive(Clone, PartialEq, Eq)]
pub struct QueryFilter<'q> {
    name: &'q str,
    pattern: Option<Pattern>,
}

impl<'q> QueryFilter<'q> {
    /// Parses one Uri-Query value (a leading `?` is tolerated); the pattern is percent-decoded.
    pub fn parse(query: &'q str) -> Result<QueryFilter<'q>, LinkFormatError> {
        let (query, base) = match query.strip_prefix('?') {
            Some(rest) => (rest, 1),
            None => (query, 0),
        };
        let (name, pattern) = match query.split_once('=') {
            Some((name, raw)) => (name, Some(Pattern::decode(raw, base + name.len() + 1)?)),
            None => (query, None),
        };
        if name.is_empty() {
            return Err(LinkFormatError::new(base, Kind::EmptyFilterName));
        }
        Ok(QueryFilter { name, pattern })
    }

    /// The attribute name, or `href` for the target.
    pub const fn name(&self) -> &'q str {
        self.name
    }

    /// The decoded pattern without its trailing `*`; `None` for a bare-name filter.
    pub fn pattern(&self) -> Option<&[u8]> {
        self.pattern.as_ref().map(Pattern::as_bytes)
    }

    /// Whether the pattern ended in `*` (prefix match).
    pub fn is_prefix(&self) -> bool {
        self.pattern.as_ref().is_some_and(Pattern::is_prefix)
    }

    /// Whether `link` passes this filter.
    ///
    /// `href` matches the target as written; other names match any attribute of that name
    /// (ASCII case ignored) whose unquoted value matches, or for `rt`, `if`, `rel`, `rev` and
    /// `ct` any one element of it. A flag attribute counts as an empty value.
    pub fn matches(&self, link: &Link<'_>) -> bool {
        let Some(pattern) = &self.pattern else {
            return self.name.eq_ignore_ascii_case("href") || link.has_attribute(self.name);
        };
        if self.name.eq_ignore_ascii_case("href") {
            return pattern.matches(link.target().bytes());
        }
        let list = LIST_VALUED
            .iter()
            .any(|n| n.eq_ignore_ascii_case(self.name));
        link.attributes()
            .filter(|a| a.is(self.name))
            .any(|a| match a.value {
                None => pattern.matches(core::iter::empty()),
                Some(v) => {
                    pattern.matches(v.unquoted_bytes())
                        || (list
                            && v.tokens()
                                .any(|t| pattern.matches(Unescaped::new(t, v.is_quoted()))))
                }
            })
    }
}

impl fmt::Debug for QueryFilter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueryFilter")
            .field("name", &self.name)
            .field("pattern", &self.pattern)
            .finish()
    }
}

/// Writes the links of `text` that pass every filter to `out`, comma-separated, as written.
///
/// Returns how many matched. The whole text is checked first, so a parse error writes
/// nothing; `OutputFull` names the offset of the first link that did not fit.
pub fn filter_links<W: fmt::Write + ?Sized>(
    text: &str,
    filters: &[QueryFilter<'_>],
    out: &mut W,
) -> Result<usize, LinkFormatError> {
    validate(text)?;
    let mut writer = LinkWriter::new(out);
    for link in links(text).flatten() {
        if filters.iter().all(|f| f.matches(&link)) {
            writer
                .copy_link(&link)
                .map_err(|_| LinkFormatError::new(link.offset(), Kind::OutputFull))?;
        }
    }
    Ok(writer.count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link_format::{SliceWriter, MAX_PATTERN_LEN, SPEC_RESOURCES};
    use std::string::String;
    use std::vec::Vec;

    /// Targets of the spec resource set passing the query `q` (given with its `?`).
    fn matching(q: &str) -> Vec<&'static str> {
        let f = QueryFilter::parse(q).unwrap();
        links(SPEC_RESOURCES)
            .map(|l| l.unwrap())
            .filter(|l| f.matches(l))
            .map(|l| l.target())
            .collect()
    }

    #[test]
    fn spec_vectors_f1_to_f7() {
        assert_eq!(matching("?rt=temperature-c"), ["/sensors/temp"]); // F1
        assert_eq!(matching("?rt=light*"), ["/sensors/light", "/actuators/led"]); // F2
        assert_eq!(
            matching("?href=/sensors/*"),
            ["/sensors/temp", "/sensors/light"]
        ); // F3
        assert_eq!(matching("?rt=core.s"), ["/sensors/light"]); // F4
        assert_eq!(matching("?if=sensor"), ["/sensors/temp", "/sensors/light"]); // F5
        assert_eq!(matching("?ct=50"), ["/sensors/light"]); // F6
        assert!(matching("?rt=light").is_empty()); // F7
    }

    #[test]
    fn other_filters() {
        assert_eq!(matching("obs"), ["/sensors/temp"]);
        assert_eq!(matching("obs=*"), ["/sensors/temp"]);
        assert_eq!(matching("href=/actuators/led"), ["/actuators/led"]);
        assert!(matching("href=/actuators").is_empty());
        assert_eq!(matching("ct=*").len(), 2);
        assert_eq!(matching("rt=light-lux%20core.s"), ["/sensors/light"]);
        assert_eq!(matching("RT=light-ctrl"), ["/actuators/led"]);
        assert_eq!(matching("IF=core.a"), ["/actuators/led"]);
        assert!(matching("title=x").is_empty());
        assert!(
            matching("rt=Light*").is_empty(),
            "values are case-sensitive"
        );
    }

    #[test]
    fn ct_lists_and_quoted_values() {
        let text = r#"</a>;ct="0 41",</b>;ct=41;title="x \"y\"""#;
        let targets = |q| {
            let f = QueryFilter::parse(q).unwrap();
            links(text)
                .map(|l| l.unwrap())
                .filter(|l| f.matches(l))
                .map(|l| l.target())
                .collect::<Vec<_>>()
        };
        assert_eq!(targets("ct=41"), ["/a", "/b"]);
        assert_eq!(targets("ct=0"), ["/a"]);
        assert_eq!(targets("title=x%20%22y%22"), ["/b"]);
        assert_eq!(targets("title=x \"*"), ["/b"]);
    }

    #[test]
    fn parse_errors_and_accessors() {
        let f = QueryFilter::parse("rt=light*").unwrap();
        assert_eq!(
            (f.name(), f.pattern(), f.is_prefix()),
            ("rt", Some(&b"light"[..]), true)
        );
        let f = QueryFilter::parse("?obs").unwrap();
        assert_eq!((f.name(), f.pattern(), f.is_prefix()), ("obs", None, false));
        assert_eq!(
            QueryFilter::parse("=x").unwrap_err().kind,
            Kind::EmptyFilterName
        );
        assert_eq!(
            QueryFilter::parse("").unwrap_err().kind,
            Kind::EmptyFilterName
        );
        let e = QueryFilter::parse("?rt=a%g1").unwrap_err();
        assert_eq!((e.offset, e.kind), (5, Kind::InvalidPercentEncoding));
    }

    #[test]
    fn pattern_limit_255_bytes() {
        let ok = std::format!("rt={}*", "a".repeat(MAX_PATTERN_LEN));
        assert_eq!(
            QueryFilter::parse(&ok).unwrap().pattern().unwrap().len(),
            255
        );
        let long = std::format!("rt={}", "a".repeat(MAX_PATTERN_LEN + 1));
        let e = QueryFilter::parse(&long).unwrap_err();
        assert_eq!((e.offset, e.kind), (3 + 255, Kind::PatternTooLong));
    }

    #[test]
    fn filter_links_writes_matches_anded() {
        let mut out = String::new();
        let f = [QueryFilter::parse("if=sensor").unwrap()];
        assert_eq!(filter_links(SPEC_RESOURCES, &f, &mut out), Ok(2));
        assert_eq!(
            out,
            r#"</sensors/temp>;rt="temperature-c";if="sensor";ct=0;obs,</sensors/light>;rt="light-lux core.s";if="sensor";ct=50"#
        );
        let both = [
            QueryFilter::parse("if=sensor").unwrap(),
            QueryFilter::parse("rt=light*").unwrap(),
        ];
        out.clear();
        assert_eq!(filter_links(SPEC_RESOURCES, &both, &mut out), Ok(1));
        assert!(out.starts_with("</sensors/light>"));
        out.clear();
        assert_eq!(filter_links(SPEC_RESOURCES, &[], &mut out), Ok(3));
        out.clear();
        let none = [QueryFilter::parse("rt=light").unwrap()];
        assert_eq!(filter_links(SPEC_RESOURCES, &none, &mut out), Ok(0));
        assert!(out.is_empty());
    }

    #[test]
    fn filter_links_errors() {
        let mut out = String::new();
        let e = filter_links("</a>,</b>x", &[], &mut out).unwrap_err();
        assert_eq!((e.offset, e.kind), (9, Kind::ExpectedSeparator));
        assert!(out.is_empty(), "nothing written on a parse error");

        let mut buf = [0u8; 40];
        let mut small = SliceWriter::new(&mut buf);
        let e = filter_links(SPEC_RESOURCES, &[], &mut small).unwrap_err();
        assert_eq!(e.kind, Kind::OutputFull);
        assert_eq!(e.offset, 0);
    }
}
