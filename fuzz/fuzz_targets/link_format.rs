//! Parses arbitrary UTF-8 as CoRE link format, walks every link and attribute, runs a query
//! filter taken from the first line, and re-serialises valid input: it must parse to the same
//! links.
#![no_main]

use covey_core::link_format::{
    filter_links, links, validate, AttrValue, Link, LinkWriter, QueryFilter, SliceWriter,
};
use libfuzzer_sys::fuzz_target;

fn unquoted(v: AttrValue<'_>) -> String {
    let mut s = String::new();
    v.write_unquoted(&mut s).expect("a String never refuses");
    s
}

/// Checks every accessor of a parsed link for internal consistency.
fn walk(text: &str, link: &Link<'_>) {
    let at = text
        .get(link.offset()..)
        .expect("offset on a char boundary");
    assert!(at.starts_with(link.raw()));
    assert!(link.raw().starts_with('<'));
    assert!(link
        .raw()
        .get(1..)
        .is_some_and(|r| r.starts_with(link.target())));
    for a in link.attributes() {
        assert!(!a.name.is_empty());
        assert!(link.attribute(a.name).is_some());
        if let Some(v) = a.value {
            let s = unquoted(v);
            assert!(v.unquoted_eq(&s));
            assert!(v.unquoted_bytes().eq(s.bytes()));
            assert!(v.is_quoted() || v.raw() == v.inner());
            // An escaped space may sit inside an element, never at its edge.
            assert!(v
                .tokens()
                .all(|t| !t.is_empty() && !t.starts_with([' ', '\t'])));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };

    let mut count = 0;
    let mut valid = true;
    for link in links(text) {
        match link {
            Ok(link) => {
                walk(text, &link);
                count += 1;
            }
            Err(e) => {
                assert!(e.offset <= text.len());
                valid = false;
            }
        }
    }
    assert_eq!(validate(text).ok(), valid.then_some(count));

    // A filter made from the first line: matching and filter_links must agree.
    let query = text.split('\n').next().unwrap_or("");
    if let Ok(filter) = QueryFilter::parse(query) {
        let expected = links(text)
            .map_while(Result::ok)
            .filter(|l| filter.matches(l))
            .count();
        let mut out = String::new();
        match filter_links(text, std::slice::from_ref(&filter), &mut out) {
            Ok(matched) => {
                assert!(valid);
                assert_eq!(matched, expected);
                assert_eq!(validate(&out), Ok(matched));
            }
            Err(_) => assert!(!valid),
        }
    }

    // Re-serialise into a fixed buffer: the canonical form is never longer than the input.
    if !valid || text.len() > 4096 {
        return;
    }
    let mut buf = [0u8; 4096];
    let mut w = LinkWriter::new(SliceWriter::new(&mut buf));
    for link in links(text).map_while(Result::ok) {
        w.link(link.target())
            .expect("a parsed target re-serialises");
        for a in link.attributes() {
            match a.value {
                None => w.attr(a.name),
                Some(v) if v.is_quoted() => w.attr_quoted(a.name, &unquoted(v)),
                Some(v) => w.attr_token(a.name, v.raw()),
            }
            .expect("a parsed attribute re-serialises");
        }
    }
    let out = w.into_inner().into_str();
    let again: Vec<Link<'_>> = links(out)
        .collect::<Result<_, _>>()
        .expect("re-serialised text parses");
    assert_eq!(again.len(), count);
    for (b, a) in again.iter().zip(links(text).map_while(Result::ok)) {
        assert_eq!(a.target(), b.target());
        assert!(a
            .attributes()
            .map(|x| x.name)
            .eq(b.attributes().map(|x| x.name)));
        for (x, y) in a.attributes().zip(b.attributes()) {
            match (x.value, y.value) {
                (None, None) => {}
                (Some(x), Some(y)) => {
                    assert_eq!(x.is_quoted(), y.is_quoted());
                    assert_eq!(unquoted(x), unquoted(y));
                }
                _ => panic!("value presence changed"),
            }
        }
    }
});
