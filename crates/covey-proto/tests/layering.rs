//! The source files of covey-proto form no cycle and respect the protocol's layering: every
//! `crate::` or `super::` path a file names (in `use` lines or inline) is an edge to the file
//! that defines the item; following the edges never leads back, and no edge goes up a layer
//! (foundation <- message <- exchange <- observe, block <- endpoint, app). Each layer keeps its
//! state in types of its own; `Endpoint` is the composition of them, and its `impl` blocks live
//! in endpoint/ alone.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, as paths relative to `src/` ("message/dedup.rs").
fn sources(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .expect("read src")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).expect("under src");
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The code of a file without comments, string contents and its unit-test module.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module path of a file: "message/dedup.rs" -> "message::dedup", "app/mod.rs" -> "app".
fn module_path(file: &str) -> String {
    file.trim_end_matches(".rs")
        .trim_end_matches("/mod")
        .trim_end_matches("lib")
        .replace('/', "::")
}

/// `code` with `super::` paths written from the crate root.
fn absolute(file: &str, code: &str) -> String {
    let module = module_path(file);
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
    let root = if parent.is_empty() {
        "crate::".to_string()
    } else {
        format!("crate::{parent}::")
    };
    code.replace("super::", &root)
}

/// The layer of a file: 0 foundation (time, storage, cc, ...), 1 message, 2 exchange,
/// 3 observe and block, 4 the endpoint facade, Apps and drivers' helpers.
fn layer(file: &str) -> u8 {
    match file.split('/').next().unwrap_or("") {
        "message" => 1,
        "exchange" => 2,
        "observe" | "block" => 3,
        "endpoint" | "app" | "node.rs" | "testing.rs" | "lib.rs" => 4,
        _ => 0,
    }
}

/// Edges that still go up a layer: code of a higher layer that lives in a lower one's file.
/// Move it to its layer, then delete the line here; new ones are refused.
const KNOWN_UPWARD: &[(&str, &str)] = &[];

/// The file a module path ("message::dedup") lives in, if any.
fn module_file(files: &BTreeSet<String>, path: &[&str]) -> Option<String> {
    if path.is_empty() {
        return Some("lib.rs".into());
    }
    let base = path.join("/");
    [format!("{base}.rs"), format!("{base}/mod.rs")]
        .into_iter()
        .find(|f| files.contains(f))
}

/// Items defined at the top level of each file: name -> files.
fn definitions(texts: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut defs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, text) in texts {
        for line in text.lines() {
            let mut words = line.split_whitespace().peekable();
            while words.peek().is_some_and(|w| w.starts_with("pub")) {
                words.next();
            }
            let (Some(kind), Some(name)) = (words.next(), words.next()) else {
                continue;
            };
            if !line.starts_with(|c: char| c.is_alphabetic()) {
                continue;
            }
            if ["struct", "enum", "trait", "type", "fn", "const", "static"].contains(&kind) {
                let name: String = name
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                defs.entry(name).or_default().insert(file.clone());
            }
        }
    }
    defs
}

/// Every `crate::a::b::{C, d::E}` path in `code`, expanded to ["a::b::C", "a::b::d::E"].
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        // Take the path up to its end, balancing braces.
        let mut depth = 0usize;
        let mut end = 0;
        for (j, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') => break,
                _ => {}
            }
            end = j + c.len_utf8();
        }
        expand("", &rest[..end], &mut out);
    }
    out
}

fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    match tree.find('{') {
        None => out.push(format!("{prefix}{tree}")),
        Some(open) => {
            let head = &tree[..open];
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let mut depth = 0;
            let mut start = 0;
            for (j, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&format!("{prefix}{head}"), &inner[start..j], out);
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            if start < inner.len() {
                expand(&format!("{prefix}{head}"), &inner[start..], out);
            }
        }
    }
}

/// The file a `crate::` path points at: the defining file of its item, or the module file.
fn target(
    files: &BTreeSet<String>,
    defs: &BTreeMap<String, BTreeSet<String>>,
    path: &str,
) -> Option<String> {
    let segments: Vec<&str> = path
        .split("::")
        .filter(|s| !s.is_empty() && *s != "self")
        .collect();
    // The longest prefix that is a module.
    let mut module_len = 0;
    for n in 1..=segments.len() {
        if module_file(files, &segments[..n]).is_some() {
            module_len = n;
        } else {
            break;
        }
    }
    let module = module_file(files, &segments[..module_len])?;
    let Some(item) = segments.get(module_len) else {
        return Some(module);
    };
    let defined_in = defs.get(*item)?;
    if defined_in.contains(&module) {
        return Some(module);
    }
    // A re-export (from lib.rs or a mod.rs): the item's only definition, or one under the module.
    let dir = module.trim_end_matches("mod.rs").trim_end_matches("lib.rs");
    let under: Vec<&String> = defined_in.iter().filter(|f| f.starts_with(dir)).collect();
    match under.as_slice() {
        [only] => Some((*only).clone()),
        _ => None,
    }
}

#[test]
fn source_files_form_no_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut list = Vec::new();
    sources(&root, &root, &mut list);
    let files: BTreeSet<String> = list.iter().cloned().collect();
    let texts: BTreeMap<String, String> = list
        .iter()
        .map(|f| {
            let text = fs::read_to_string(root.join(f)).expect("read");
            (f.clone(), absolute(f, &code(&text)))
        })
        .collect();
    let defs = definitions(&texts);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, text) in &texts {
        for path in crate_paths(text) {
            if let Some(to) = target(&files, &defs, &path) {
                if &to != file && to != "lib.rs" {
                    edges.entry(file.clone()).or_default().insert(to);
                }
            }
        }
    }
    // Depth-first search for a back edge, reporting the cycle it closes.
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        cycles: &mut Vec<String>,
    ) {
        if done.contains(node) {
            return;
        }
        if let Some(i) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[i..].to_vec();
            cycle.push(node.to_string());
            cycles.push(cycle.join(" -> "));
            return;
        }
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            visit(next, edges, stack, done, cycles);
        }
        stack.pop();
        done.insert(node.to_string());
    }
    let mut cycles = Vec::new();
    let mut done = BTreeSet::new();
    for file in &files {
        visit(file, &edges, &mut Vec::new(), &mut done, &mut cycles);
    }
    let mut upward = Vec::new();
    for (from, tos) in &edges {
        for to in tos {
            let allowed = KNOWN_UPWARD.contains(&(from.as_str(), to.as_str()));
            if layer(to) > layer(from) && !allowed {
                upward.push(format!("(\"{from}\", \"{to}\"),"));
            }
        }
    }
    let stale: Vec<_> = KNOWN_UPWARD
        .iter()
        .filter(|(from, to)| !edges.get(*from).is_some_and(|t| t.contains(*to)))
        .collect();
    assert!(
        stale.is_empty(),
        "KNOWN_UPWARD entries no longer needed: {stale:?}"
    );
    assert!(
        upward.is_empty(),
        "edges going up a layer:\n{}",
        upward.join("\n")
    );
    assert!(
        cycles.is_empty(),
        "cycles between source files:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn endpoint_impl_blocks_live_in_endpoint_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut list = Vec::new();
    sources(&root, &root, &mut list);
    let outside: Vec<&String> = list
        .iter()
        .filter(|f| !f.starts_with("endpoint/"))
        .filter(|f| {
            let text = fs::read_to_string(root.join(f)).expect("read");
            code(&text).contains("impl Endpoint")
        })
        .collect();
    assert!(
        outside.is_empty(),
        "impl Endpoint outside endpoint/: {outside:?}"
    );
}
