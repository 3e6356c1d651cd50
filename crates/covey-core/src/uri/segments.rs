//! Path segments with dot-segments removed (RFC 3986 §5.2.4), and query arguments.
//!
//! Reference resolution (RFC 7252 §6.4 step 2) removes "." and ".." segments. The resolved
//! path is a stack, and the segment that ends up at depth k is the last one pushed to depth k.
//! With no buffer for the stack, one forward pass finds the next [`LOOKAHEAD`] of them; a pass
//! stops early once too few ".." remain to remove them, so paths without ".." cost one pass in
//! total. Only literal dots count: "%2E" is data, as in RFC 3986 §5.2.4.

/// Resolved segments located per pass over the path.
const LOOKAHEAD: usize = 16;

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

/// The literal segments of `body` from byte `from` on, each with its offset.
fn literal_segments(body: &str, from: usize) -> impl Iterator<Item = (usize, &str)> {
    let mut at = from;
    body.get(from..)
        .into_iter()
        .flat_map(|rest| rest.split('/'))
        .map(move |segment| {
            let start = at;
            at += segment.len() + 1;
            (start, segment)
        })
}

/// The raw (still percent-encoded) segments of a path after dot-segment removal; an empty
/// path or "/" has none, and a trailing "/" gives an empty last segment.
#[derive(Debug, Clone)]
pub struct PathSegments<'a> {
    /// The path without its leading "/".
    body: &'a str,
    /// Where the next pass starts; `None` once every resolved segment has been located.
    next_pass: Option<usize>,
    /// ".." segments from `next_pass` on.
    parents: usize,
    /// Offsets in `body` of resolved segments located but not yet returned.
    found: [usize; LOOKAHEAD],
    found_len: usize,
    found_next: usize,
    /// A final empty segment is still due (the path ended in "." or "..").
    trailing: bool,
}

impl<'a> PathSegments<'a> {
    /// Segments of a `path-abempty` ("" or starting with "/").
    pub(crate) fn new(path: &'a str) -> PathSegments<'a> {
        let mut segments = PathSegments {
            body: "",
            next_pass: None,
            parents: 0,
            found: [0; LOOKAHEAD],
            found_len: 0,
            found_next: 0,
            trailing: false,
        };
        let Some(body) = path.strip_prefix('/') else {
            return segments;
        };
        // One pass for the resolved depth, and so whether the result is just "/".
        let mut depth = 0usize;
        let mut parents = 0usize;
        let mut last = Kind::Normal;
        let mut only_root_child_empty = false;
        for (_, segment) in literal_segments(body, 0) {
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
            return segments; // The path resolves to "" or "/".
        }
        segments.body = body;
        segments.next_pass = Some(0);
        segments.parents = parents;
        segments.trailing = trailing;
        segments
    }

    /// Locates the next resolved segments, starting at `from` with an empty stack above the
    /// last segment returned (which no later ".." can remove).
    fn pass(&mut self, from: usize) {
        let mut depth = 0usize;
        let mut parents_seen = 0usize;
        let mut parents_before_last_slot = 0usize;
        let mut last_push = [0usize; LOOKAHEAD];
        let mut settled = false;
        for (offset, segment) in literal_segments(self.body, from) {
            // Too few ".." left to reach back into the first LOOKAHEAD depths: they are final.
            let parents_left = self.parents.saturating_sub(parents_seen);
            if depth >= LOOKAHEAD.saturating_add(parents_left) {
                settled = true;
                break;
            }
            match kind(segment) {
                Kind::Current => {}
                Kind::Parent => {
                    parents_seen += 1;
                    depth = depth.saturating_sub(1);
                }
                Kind::Normal => {
                    if let Some(slot) = last_push.get_mut(depth) {
                        *slot = offset;
                        if depth + 1 == LOOKAHEAD {
                            parents_before_last_slot = parents_seen;
                        }
                    }
                    depth += 1;
                }
            }
        }
        // The last push to each depth still reached (at the end, or once settled) is that
        // depth's segment.
        self.found = last_push;
        self.found_len = depth.min(LOOKAHEAD);
        self.found_next = 0;
        self.next_pass = None;
        if settled || depth > LOOKAHEAD {
            if let Some(&offset) = last_push.last() {
                self.next_pass = Some(offset + self.segment_at(offset).len() + 1);
                self.parents = self.parents.saturating_sub(parents_before_last_slot);
            }
        }
    }

    fn segment_at(&self, offset: usize) -> &'a str {
        let rest = self.body.get(offset..).unwrap_or_default();
        rest.split('/').next().unwrap_or_default()
    }
}

impl<'a> Iterator for PathSegments<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        loop {
            if self.found_next < self.found_len {
                let offset = self.found.get(self.found_next).copied().unwrap_or_default();
                self.found_next += 1;
                return Some(self.segment_at(offset));
            }
            match self.next_pass {
                Some(from) => self.pass(from),
                None => return core::mem::take(&mut self.trailing).then_some(""),
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

    proptest::proptest! {
        #[test]
        fn long_paths_agree_with_the_rfc_algorithm(
            parts in proptest::collection::vec(
                proptest::sample::select(&["a", "", ".", "..", "b", "c"][..]), 0..120)
        ) {
            let path: std::string::String = parts.iter().map(|p| std::format!("/{p}")).collect();
            proptest::prop_assert_eq!(segments(&path), reference(&path));
        }
    }

    #[test]
    fn more_segments_than_one_pass_finds() {
        let path: std::string::String = (0..40).map(|i| std::format!("/s{i}/x/..")).collect();
        let expected: Vec<std::string::String> = (0..40)
            .map(|i| std::format!("s{i}"))
            .chain([std::string::String::new()])
            .collect();
        assert_eq!(segments(&path), expected);
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
