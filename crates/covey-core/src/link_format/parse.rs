//! The link-format parser (RFC 6690 §2): link-values split at top-level commas, each checked
//! completely before it is handed out.

use super::grammar::{is_name_byte, is_ptoken_byte, is_quotable_byte, is_target_byte, skip_space};
use super::{AttrValue, Attribute, Link, LinkFormatError, LinkFormatErrorKind as Kind};

/// Iterates over the link-values of `text`, each a `Link` or the error that ends the iteration.
pub fn links(text: &str) -> Links<'_> {
    Links {
        text,
        pos: 0,
        state: State::Start,
    }
}

/// Checks that all of `text` is link format; returns the number of links.
pub fn validate(text: &str) -> Result<usize, LinkFormatError> {
    links(text).try_fold(0, |count, link| link.map(|_| count + 1))
}

/// Where the iterator stands between link-values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing read yet: an empty text is an empty list.
    Start,
    /// Just after the comma at this offset: a link-value must follow.
    AfterComma(usize),
    /// The end or an error was reached.
    Done,
}

/// Iterator over the link-values of a text; see [`links`].
#[derive(Debug, Clone)]
pub struct Links<'a> {
    text: &'a str,
    pos: usize,
    state: State,
}

impl<'a> Links<'a> {
    /// The text being parsed.
    pub fn text(&self) -> &'a str {
        self.text
    }

    fn fail(&mut self, offset: usize, kind: Kind) -> Option<Result<Link<'a>, LinkFormatError>> {
        self.state = State::Done;
        Some(Err(LinkFormatError::new(offset, kind)))
    }
}

impl<'a> Iterator for Links<'a> {
    type Item = Result<Link<'a>, LinkFormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        let comma = match self.state {
            State::Done => return None,
            State::Start => None,
            State::AfterComma(at) => Some(at),
        };
        let bytes = self.text.as_bytes();
        let start = skip_space(bytes, self.pos);
        match (bytes.get(start), comma) {
            (None, None) => {
                self.state = State::Done;
                return None;
            }
            (None, Some(at)) => return self.fail(at, Kind::EmptyLinkValue),
            (Some(b','), _) => return self.fail(start, Kind::EmptyLinkValue),
            (Some(b'<'), _) => {}
            (Some(_), _) => return self.fail(start, Kind::ExpectedLinkStart),
        }
        let (link, end) = match parse_link(self.text, start) {
            Ok(parsed) => parsed,
            Err(e) => return self.fail(e.offset, e.kind),
        };
        let next = skip_space(bytes, end);
        match bytes.get(next) {
            None => self.state = State::Done,
            Some(b',') => {
                self.pos = next + 1;
                self.state = State::AfterComma(next);
            }
            Some(_) => return self.fail(next, Kind::ExpectedSeparator),
        }
        Some(Ok(link))
    }
}

impl core::iter::FusedIterator for Links<'_> {}

/// Parses the link-value whose `<` is at `start`; returns it and the offset just past it.
fn parse_link(text: &str, start: usize) -> Result<(Link<'_>, usize), LinkFormatError> {
    let bytes = text.as_bytes();
    let mut close = start + 1;
    loop {
        match bytes.get(close) {
            Some(b'>') => break,
            // A second '<' means the first was never closed.
            None | Some(b'<') => {
                return Err(LinkFormatError::new(start, Kind::UnterminatedTarget));
            }
            Some(&b) if !is_target_byte(b) => {
                return Err(LinkFormatError::new(close, Kind::InvalidTargetChar));
            }
            Some(_) => close += 1,
        }
    }
    let params_start = close + 1;
    let mut end = params_start;
    loop {
        let semi = skip_space(bytes, end);
        if bytes.get(semi) != Some(&b';') {
            break;
        }
        let (_, param_end) = scan_param(text, skip_space(bytes, semi + 1))?;
        end = param_end;
    }
    let link = Link::new(
        text.get(start..end).unwrap_or(""),
        text.get(start + 1..close).unwrap_or(""),
        text.get(params_start..end).unwrap_or(""),
        start,
    );
    Ok((link, end))
}

/// Scans one link-param (`parmname [ "=" ( ptoken / quoted-string ) ]`) starting at `pos`;
/// returns it and the offset just past it.
pub(crate) fn scan_param(
    text: &str,
    pos: usize,
) -> Result<(Attribute<'_>, usize), LinkFormatError> {
    let bytes = text.as_bytes();
    let mut i = pos;
    while bytes.get(i).is_some_and(|&b| is_name_byte(b)) {
        i += 1;
    }
    if i == pos {
        return Err(LinkFormatError::new(pos, Kind::ExpectedParamName));
    }
    if bytes.get(i) == Some(&b'*') {
        i += 1;
    }
    let name = text.get(pos..i).unwrap_or("");
    if bytes.get(i) != Some(&b'=') {
        return Ok((Attribute { name, value: None }, i));
    }
    let value_start = i + 1;
    let value_end = if bytes.get(value_start) == Some(&b'"') {
        scan_quoted(bytes, value_start)?
    } else {
        let mut j = value_start;
        while bytes.get(j).is_some_and(|&b| is_ptoken_byte(b)) {
            j += 1;
        }
        if j == value_start {
            return Err(LinkFormatError::new(value_start, Kind::MissingValue));
        }
        j
    };
    let value = AttrValue::new(text.get(value_start..value_end).unwrap_or(""));
    let attribute = Attribute {
        name,
        value: Some(value),
    };
    Ok((attribute, value_end))
}

/// Scans the quoted-string whose opening `"` is at `open`; returns the offset past its closing `"`.
fn scan_quoted(bytes: &[u8], open: usize) -> Result<usize, LinkFormatError> {
    let unterminated = LinkFormatError::new(open, Kind::UnterminatedQuote);
    let mut i = open + 1;
    loop {
        match bytes.get(i) {
            Some(b'"') => return Ok(i + 1),
            // A line break inside quotes almost always means the closing quote is missing.
            None | Some(b'\r' | b'\n') => return Err(unterminated),
            Some(b'\\') => match bytes.get(i + 1) {
                None | Some(b'\r' | b'\n') => return Err(unterminated),
                Some(&b) if is_quotable_byte(b) => i += 2,
                Some(_) => return Err(LinkFormatError::new(i + 1, Kind::InvalidQuotedChar)),
            },
            Some(&b) if is_quotable_byte(b) => i += 1,
            Some(_) => return Err(LinkFormatError::new(i, Kind::InvalidQuotedChar)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link_format::SPEC_RESOURCES;
    use std::string::{String, ToString};
    use std::vec::Vec;

    fn all(text: &str) -> Vec<Link<'_>> {
        links(text).collect::<Result<_, _>>().unwrap()
    }

    fn err(text: &str) -> (usize, Kind) {
        let e = validate(text).unwrap_err();
        (e.offset, e.kind)
    }

    /// `name=value` pairs of a link, values unquoted.
    fn attrs(link: &Link<'_>) -> Vec<(String, Option<String>)> {
        link.attributes()
            .map(|a| {
                let value = a.value.map(|v| {
                    let mut s = String::new();
                    v.write_unquoted(&mut s).unwrap();
                    s
                });
                (a.name.to_string(), value)
            })
            .collect()
    }

    fn pairs(expected: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        expected
            .iter()
            .map(|(n, v)| (n.to_string(), v.map(str::to_string)))
            .collect()
    }

    #[test]
    fn spec_resource_set() {
        let l = all(SPEC_RESOURCES);
        assert_eq!(l.len(), 3);
        assert_eq!(validate(SPEC_RESOURCES), Ok(3));
        let targets: Vec<_> = l.iter().map(|l| l.target()).collect();
        assert_eq!(
            targets,
            ["/sensors/temp", "/sensors/light", "/actuators/led"]
        );
        assert_eq!(
            l[0].raw(),
            r#"</sensors/temp>;rt="temperature-c";if="sensor";ct=0;obs"#
        );
        assert_eq!(
            l[1].offset(),
            SPEC_RESOURCES.find("</sensors/light>").unwrap()
        );
        assert_eq!(
            attrs(&l[0]),
            pairs(&[
                ("rt", Some("temperature-c")),
                ("if", Some("sensor")),
                ("ct", Some("0")),
                ("obs", None)
            ])
        );
        let rt = l[1].attribute("rt").unwrap().value.unwrap();
        assert_eq!(rt.raw(), "\"light-lux core.s\"");
        assert!(rt.is_quoted());
        assert_eq!(rt.tokens().collect::<Vec<_>>(), ["light-lux", "core.s"]);
        let ct = l[1].attribute("CT").unwrap().value.unwrap();
        assert_eq!((ct.raw(), ct.is_quoted()), ("50", false));
        assert_eq!(
            attrs(&l[2]),
            pairs(&[("rt", Some("light-ctrl")), ("if", Some("core.a"))])
        );
        assert!(l[2].attribute("obs").is_none());
        assert!(l[0].has_attribute("obs"));
    }

    #[test]
    fn empty_input_has_no_links() {
        assert_eq!(links("").count(), 0);
        assert_eq!(validate(""), Ok(0));
        assert_eq!(validate(" \r\n\t"), Ok(0));
    }

    #[test]
    fn quoted_commas_semicolons_and_escapes_do_not_split() {
        let text = r#"</a>;title="x, y; \"z\" \\",</b,c;d>;rt="one two""#;
        let l = all(text);
        assert_eq!(l.len(), 2);
        assert_eq!(attrs(&l[0]), pairs(&[("title", Some(r#"x, y; "z" \"#))]));
        let title = l[0].attribute("title").unwrap().value.unwrap();
        assert!(title.unquoted_eq(r#"x, y; "z" \"#));
        assert_eq!(l[1].target(), "/b,c;d");
        assert_eq!(l[1].raw(), r#"</b,c;d>;rt="one two""#);
    }

    #[test]
    fn anchor_title_star_and_ct_list() {
        let text = concat!(
            r#"</t>;anchor="coap://[2001:db8::1]/s";rel="describedby alternate";"#,
            "title*=utf-8'en'%C3%A9t%C3%A9;ct=\"0 41\";sz=1024"
        );
        let l = all(text);
        assert_eq!(
            attrs(&l[0]),
            pairs(&[
                ("anchor", Some("coap://[2001:db8::1]/s")),
                ("rel", Some("describedby alternate")),
                ("title*", Some("utf-8'en'%C3%A9t%C3%A9")),
                ("ct", Some("0 41")),
                ("sz", Some("1024")),
            ])
        );
        let ct: Vec<u16> = l[0]
            .attribute("ct")
            .unwrap()
            .value
            .unwrap()
            .tokens()
            .map(|t| t.parse().unwrap())
            .collect();
        assert_eq!(ct, [0, 41]);
    }

    #[test]
    fn tolerates_whitespace_between_links_and_around_semicolons() {
        let text = "\n </a>;ct=0 ,\r\n\t</b> ; obs ;rt=x\n";
        let l = all(text);
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].raw(), "</a>;ct=0");
        assert_eq!(l[1].raw(), "</b> ; obs ;rt=x");
        assert_eq!(attrs(&l[1]), pairs(&[("obs", None), ("rt", Some("x"))]));
    }

    #[test]
    fn empty_target_and_empty_quoted_value() {
        let l = all(r#"<>;title="""#);
        assert_eq!(l[0].target(), "");
        assert!(l[0]
            .attribute("title")
            .unwrap()
            .value
            .unwrap()
            .unquoted_eq(""));
    }

    #[test]
    fn libcoap_and_californium_outputs() {
        let libcoap = concat!(
            r#"</>;title="General Info";ct=0,</time>;if="clock";rt="ticks";"#,
            r#"title="Internal Clock";ct=0;obs,</async>;ct=0"#
        );
        assert_eq!(validate(libcoap), Ok(3));
        let californium = concat!(
            r#"</obs>;obs;rt="observe";title="Observable resource which changes every 5 seconds","#,
            r#"</large>;rt="block";sz=1280;title="Large resource",</multi-format>;ct="0 41";"#,
            r#"title="Resource that exists in different content formats (text/plain utf8 and application/xml)""#
        );
        assert_eq!(validate(californium), Ok(3));
    }

    #[test]
    fn errors_name_offset_and_rule() {
        assert_eq!(err("/a>"), (0, Kind::ExpectedLinkStart));
        assert_eq!(err("</a>,  x"), (7, Kind::ExpectedLinkStart));
        assert_eq!(err("</a;rt=x"), (0, Kind::UnterminatedTarget));
        assert_eq!(err("</a>,</b,</c>"), (5, Kind::UnterminatedTarget));
        assert_eq!(err("</a b>"), (3, Kind::InvalidTargetChar));
        assert_eq!(err(r#"</a>;title="abc"#), (11, Kind::UnterminatedQuote));
        assert_eq!(
            err("</a>;title=\"abc\n,</b>"),
            (11, Kind::UnterminatedQuote)
        );
        assert_eq!(err("</a>;title=\"a\u{1}\""), (13, Kind::InvalidQuotedChar));
        assert_eq!(err("</a>x"), (4, Kind::ExpectedSeparator));
        assert_eq!(err("</a>;rt=x y"), (10, Kind::ExpectedSeparator));
        assert_eq!(err(r#"</a>;ct=0"1""#), (9, Kind::ExpectedSeparator));
        assert_eq!(err("</a>,,</b>"), (5, Kind::EmptyLinkValue));
        assert_eq!(err("</a>, ,</b>"), (6, Kind::EmptyLinkValue));
        assert_eq!(err(",</a>"), (0, Kind::EmptyLinkValue));
        assert_eq!(err("</a>,"), (4, Kind::EmptyLinkValue));
        assert_eq!(err("</a>;"), (5, Kind::ExpectedParamName));
        assert_eq!(err("</a>;;ct=0"), (5, Kind::ExpectedParamName));
        assert_eq!(err("</a>;=0"), (5, Kind::ExpectedParamName));
        assert_eq!(err("</a>;ct="), (8, Kind::MissingValue));
        assert_eq!(err("</a>;ct=,</b>"), (8, Kind::MissingValue));
        let e = validate("</a>,</b>;title=\"x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "at byte 16: quoted-string has no closing '\"'"
        );
    }

    #[test]
    fn iteration_stops_after_the_first_error() {
        let mut it = links("</a>,</b>x,</c>");
        assert_eq!(it.next().unwrap().unwrap().target(), "/a");
        assert!(it.next().unwrap().is_err());
        assert!(it.next().is_none());
        assert!(it.next().is_none());
    }
}
