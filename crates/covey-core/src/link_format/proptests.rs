//! Property tests: the parser never panics, and written links parse back to what was written.

use std::string::String;
use std::vec::Vec;

use proptest::prelude::*;

use super::{links, validate, LinkWriter, QueryFilter};

/// A generated attribute value.
#[derive(Debug, Clone)]
enum Value {
    Flag,
    Token(String),
    Quoted(String),
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Flag),
        "[!#$%&'()*+./0-9:<=>?@A-Z\\[\\]^_`a-z{|}~-]{1,12}".prop_map(Value::Token),
        "[^\\x00-\\x08\\x0A-\\x1F\\x7F]{0,16}".prop_map(Value::Quoted),
    ]
}

fn attribute() -> impl Strategy<Value = (String, Value)> {
    ("[a-zA-Z0-9!#$&+.^_`|~-]{1,8}\\*?", value())
}

fn link() -> impl Strategy<Value = (String, Vec<(String, Value)>)> {
    (
        "[a-zA-Z0-9/._~%:@!$&'()*+,;=?#\\[\\]-]{0,24}",
        proptest::collection::vec(attribute(), 0..6),
    )
}

proptest! {
    #[test]
    fn links_never_panics(text in "\\PC*") {
        let mut n = 0;
        for link in links(&text) {
            let Ok(link) = link else { break };
            n += 1;
            let _ = (link.target(), link.raw());
            for a in link.attributes() {
                if let Some(v) = a.value {
                    let mut s = String::new();
                    v.write_unquoted(&mut s).unwrap();
                    prop_assert!(v.unquoted_eq(&s));
                    let _ = v.tokens().count();
                }
            }
        }
        if let Ok(count) = validate(&text) {
            prop_assert_eq!(count, n);
        }
    }

    #[test]
    fn arbitrary_bytes_around_link_syntax(text in "[<>;,=\"\\\\ a/*\n\t\u{1}é]{0,40}",
                                          query in "[a-z=*%0-9]{0,8}") {
        let n = links(&text).filter_map(Result::ok).count();
        if let Ok(f) = QueryFilter::parse(&query) {
            let mut out = String::new();
            if let Ok(matched) = super::filter_links(&text, &[f], &mut out) {
                prop_assert!(matched <= n);
                prop_assert_eq!(validate(&out), Ok(matched));
            }
        }
    }

    #[test]
    fn write_then_parse_returns_the_same_links(set in proptest::collection::vec(link(), 0..6)) {
        let mut out = String::new();
        let mut w = LinkWriter::new(&mut out);
        for (target, attrs) in &set {
            w.link(target).unwrap();
            for (name, value) in attrs {
                match value {
                    Value::Flag => w.attr(name),
                    Value::Token(t) => w.attr_token(name, t),
                    Value::Quoted(q) => w.attr_quoted(name, q),
                }
                .unwrap();
            }
        }
        let parsed: Vec<_> = links(&out).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(parsed.len(), set.len());
        for (link, (target, attrs)) in parsed.iter().zip(&set) {
            prop_assert_eq!(link.target(), target.as_str());
            let got: Vec<_> = link.attributes().collect();
            prop_assert_eq!(got.len(), attrs.len());
            for (a, (name, value)) in got.iter().zip(attrs) {
                prop_assert_eq!(a.name, name.as_str());
                match (a.value, value) {
                    (None, Value::Flag) => {}
                    (Some(v), Value::Token(t)) => {
                        prop_assert!(!v.is_quoted());
                        prop_assert_eq!(v.raw(), t.as_str());
                    }
                    (Some(v), Value::Quoted(q)) => {
                        prop_assert!(v.is_quoted());
                        prop_assert!(v.unquoted_eq(q));
                        let mut s = String::new();
                        v.write_unquoted(&mut s).unwrap();
                        prop_assert_eq!(&s, q);
                    }
                    (got, want) => prop_assert!(false, "{:?} != {:?}", got, want),
                }
            }
        }
    }
}
