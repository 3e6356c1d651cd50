//! Path segments with dot-segments removed (RFC 3986 §5.2.4), and query arguments.
//!
//! Reference resolution (RFC 7252 §6.4 step 2) removes "." and ".." segments. Without a
//! buffer to hold the resolved path, each segment is kept only when no later ".." removes it:
//! a segment is removed exactly when, somewhere after it, the ".." segments outnumber the
//! other non-"." segments. Only literal dots count; "%2E" is data, as in RFC 3986 §5.2.4.

/// What a literal segment does to the resolved path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// ".": nothing.
    Current,
    /// "..": removes the segment before it.
    Parent,
    /// Anything else: a segment of the result.
    Normal,
}

fn kind(segment: &str) -> Kind {
    match segment {
        "." => Kind::Current,
        ".." => Kind::Parent,
        _ => Kind::Normal,
    }
}

/// Splits the first segment off `text`; the rest is `None` after the last one.
fn split_first(text: &str) -> (&str, Option<&str>) {
    match text.split_once('/') {
        Some((first, rest)) => (first, Some(rest)),
        None => (text, None),
    }
}

/// The raw (still percent-encoded) segments of a path after dot-segment removal; an empty
/// path or "/" has none, and a trailing "/" gives an empty last segment.
#[derive(Debug, Clone)]
pub struct PathSegments<'a> {
    /// Literal segments not yet looked at.
    rest: Option<&'a str>,
    /// ".." segments among them.
    parents: usize,
    /// A final empty segment is still due (the path ended in "." or "..").
    trailing: bool,
}

impl<'a> PathSegments<'a> {
    /// Segments of a `path-abempty` ("" or starting with "/").
    pub(crate) fn new(path: &'a str) -> PathSegments<'a> {
        let none = PathSegments {
            rest: None,
            parents: 0,
            trailing: false,
        };
        let Some(body) = path.strip_prefix('/') else {
            return none;
        };
        // One pass to learn the resolved depth, and so whether the result is just "/".
        let mut depth = 0usize;
        let mut parents = 0usize;
        let mut last = Kind::Normal;
        let mut only_root_child_empty = false;
        for segment in body.split('/') {
            last = kind(segment);
            match last {
                Kind::Current => {}
                Kind::Parent => {
                    parents += 1;
                    depth = depth.saturating_sub(1);
                }
                Kind::Normal => {
                    if depth == 0 {
                        only_root_child_empty = segment.is_empty();
                    }
                    depth += 1;
                }
            }
        }
        // A path ending in a dot-segment resolves to one ending in "/".
        let trailing = last != Kind::Normal && depth > 0;
        if depth == 0 || (depth == 1 && !trailing && only_root_child_empty) {
            // The path resolves to "" or "/".
            return none;
        }
        PathSegments {
            rest: Some(body),
            parents,
            trailing,
        }
    }

    /// True when a ".." after `self.rest` removes the segment just taken; on removal, skips
    /// the removed stretch (every segment in it is removed too).
    fn removed_later(&mut self) -> bool {
        // Net ".." still needed to remove the segment, and ".." left to do it with.
        let mut needed = 1usize;
        let mut parents = self.parents;
        let mut scan = self.rest;
        while let Some(text) = scan {
            if parents < needed {
                return false;
            }
            let (segment, rest) = split_first(text);
            scan = rest;
            match kind(segment) {
                Kind::Current => {}
                Kind::Normal => needed += 1,
                Kind::Parent => {
                    parents = parents.saturating_sub(1);
                    needed = needed.saturating_sub(1);
                    if needed == 0 {
                        self.rest = scan;
                        self.parents = parents;
                        return true;
                    }
                }
            }
        }
        false
    }
}

impl<'a> Iterator for PathSegments<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        loop {
            let Some(text) = self.rest else {
                return core::mem::take(&mut self.trailing).then_some("");
            };
            let (segment, rest) = split_first(text);
            self.rest = rest;
            match kind(segment) {
                Kind::Current => {}
                Kind::Parent => self.parents = self.parents.saturating_sub(1),
                Kind::Normal => {
                    if !self.removed_later() {
                        return Some(segment);
                    }
                }
            }
        }
    }
}

/// The raw (still percent-encoded) `&`-separated arguments of a query.
#[derive(Debug, Clone)]
pub struct QueryArgs<'a> {
    rest: Option<&'a str>,
}

impl<'a> QueryArgs<'a> {
    /// Arguments of `query`; `None` (no "?") has none, `Some("")` has one empty argument.
    pub(crate) fn new(query: Option<&'a str>) -> QueryArgs<'a> {
        QueryArgs { rest: query }
    }
}

impl<'a> Iterator for QueryArgs<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let text = self.rest?;
        let (arg, rest) = match text.split_once('&') {
            Some((arg, rest)) => (arg, Some(rest)),
            None => (text, None),
        };
        self.rest = rest;
        Some(arg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn segments(path: &str) -> Vec<&str> {
        PathSegments::new(path).collect()
    }

    /// RFC 3986 §5.2.4 as written, on a std String, to check the buffer-free version.
    fn reference(path: &str) -> Vec<std::string::String> {
        use std::string::String;
        let mut input = String::from(path);
        let mut output = String::new();
        let pop = |out: &mut String| {
            let cut = out.rfind('/').unwrap_or(0);
            out.truncate(cut);
        };
        while !input.is_empty() {
            if let Some(r) = input.strip_prefix("../").or(input.strip_prefix("./")) {
                input = r.into();
            } else if input.starts_with("/./") {
                input.replace_range(..3, "/");
            } else if input == "/." {
                input = "/".into();
            } else if input.starts_with("/../") {
                input.replace_range(..4, "/");
                pop(&mut output);
            } else if input == "/.." {
                input = "/".into();
                pop(&mut output);
            } else if input == "." || input == ".." {
                input.clear();
            } else {
                let start = usize::from(input.starts_with('/'));
                let end = input[start..].find('/').map_or(input.len(), |i| i + start);
                output.push_str(&input[..end]);
                input.replace_range(..end, "");
            }
        }
        if output.is_empty() || output == "/" {
            return Vec::new();
        }
        output[1..].split('/').map(String::from).collect()
    }

    #[test]
    fn plain_paths() {
        assert!(segments("").is_empty());
        assert!(segments("/").is_empty());
        assert_eq!(segments("/a"), ["a"]);
        assert_eq!(segments("/a/"), ["a", ""]);
        assert_eq!(segments("//"), ["", ""]);
        assert_eq!(segments("//%2F//"), ["", "%2F", "", ""]);
    }

    #[test]
    fn dot_segments() {
        assert_eq!(segments("/a/b/../c"), ["a", "c"]);
        assert_eq!(segments("/a/./b"), ["a", "b"]);
        assert_eq!(segments("/a/b/.."), ["a", ""]);
        assert_eq!(segments("/a/."), ["a", ""]);
        assert!(segments("/a/..").is_empty());
        assert!(segments("/./").is_empty());
        assert!(segments("/a/../").is_empty());
        assert!(segments("/../..").is_empty());
        assert_eq!(segments("/../a"), ["a"]);
        assert_eq!(segments("/a//../b"), ["a", "b"]);
        assert_eq!(segments("/%2E/%2E%2E"), ["%2E", "%2E%2E"]);
        assert_eq!(segments("/a/b/c/../../d/./e/.."), ["a", "d", ""]);
    }

    #[test]
    fn agrees_with_the_rfc_algorithm() {
        // Every path of up to 5 segments drawn from a small alphabet.
        let alphabet = ["a", "", ".", "..", "b"];
        let mut paths = Vec::from([std::string::String::new()]);
        for _ in 0..5 {
            let mut next = Vec::new();
            for p in &paths {
                for s in alphabet {
                    next.push(std::format!("{p}/{s}"));
                }
            }
            paths.extend(next);
        }
        for p in &paths {
            assert_eq!(segments(p), reference(p), "path {p:?}");
        }
    }

    #[test]
    fn query_arguments() {
        let args = |q| QueryArgs::new(q).collect::<Vec<_>>();
        assert!(args(None).is_empty());
        assert_eq!(args(Some("")), [""]);
        assert_eq!(args(Some("a&b=c&")), ["a", "b=c", ""]);
        assert_eq!(args(Some("%2F%2F&?%26")), ["%2F%2F", "?%26"]);
    }
}
