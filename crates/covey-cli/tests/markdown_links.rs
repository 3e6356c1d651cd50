//! Every relative link in the repository's Markdown (README.md, docs/, the crates' and fuzz/
//! READMEs) leads to a file that exists, and to a heading that exists when it names one; every
//! Markdown file named in backticks exists too, so no page sends a reader to a file they lack.
//! Every `covey` command the pages show exists too: the subcommand of each `covey ...` in
//! inline code or at the start of a code-block line is one `covey --help` lists, and so is
//! that of each `covey entity ...`, so no page tells a reader to run a command they lack.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use support::{covey, stdout};

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root")
}

/// README.md, docs/**/*.md, crates/**/README.md and fuzz/README.md.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md"), root.join("fuzz/README.md")];
    collect(
        &root.join("docs"),
        &mut |p| p.extension().is_some_and(|e| e == "md"),
        &mut files,
    );
    collect(
        &root.join("crates"),
        &mut |p| p.file_name().is_some_and(|n| n == "README.md"),
        &mut files,
    );
    files.retain(|f| f.is_file());
    files
}

fn collect(dir: &Path, wanted: &mut dyn FnMut(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                collect(&path, wanted, out);
            }
        } else if wanted(&path) {
            out.push(path);
        }
    }
}

/// The lines outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut inside = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                inside = !inside;
                return false;
            }
            !inside
        })
        .collect()
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .iter()
        .filter_map(|line| line.strip_prefix('#'))
        .map(|rest| slug(rest.trim_start_matches('#')))
        .collect()
}

/// The targets of the inline links `[text](target)` on `line`.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let Some(end) = after.find(')') else { break };
        targets.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    targets
}

/// The Markdown files named in backticks on `line` (`docs/x.md`, `../y.md`).
fn quoted_markdown(line: &str) -> Vec<String> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| quoted.ends_with(".md") && !quoted.contains(' '))
        .map(str::to_string)
        .collect()
}

fn problems_in(file: &Path, root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("read a Markdown file");
    let here = file.parent().expect("a folder");
    let shown = file
        .strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string();
    let mut problems = Vec::new();
    for line in prose(&text) {
        for target in link_targets(line) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((target.as_str(), ""));
            let linked = if path.is_empty() {
                file.to_path_buf()
            } else {
                here.join(path)
            };
            if !linked.exists() {
                problems.push(format!("{shown}: link to missing {target}"));
                continue;
            }
            let is_markdown = linked.extension().is_some_and(|e| e == "md");
            if !anchor.is_empty() && is_markdown {
                let linked_text = std::fs::read_to_string(&linked).unwrap_or_default();
                if !anchors(&linked_text).contains(anchor) {
                    problems.push(format!("{shown}: link to missing heading {target}"));
                }
            }
        }
        for named in quoted_markdown(line) {
            if !here.join(&named).exists() && !root.join(&named).exists() {
                problems.push(format!("{shown}: names missing file {named}"));
            }
        }
    }
    problems
}

#[test]
fn every_relative_link_and_named_markdown_file_exists() {
    let root = root();
    let files = markdown_files(&root);
    assert!(files.len() >= 5, "too few Markdown files found: {files:?}");
    let problems: Vec<String> = files.iter().flat_map(|f| problems_in(f, &root)).collect();
    assert!(
        problems.is_empty(),
        "broken references:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_sees_broken_links_and_headings() {
    let root = root();
    let file = root.join("README.md");
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("links-check.md");
    std::fs::write(
        &scratch,
        format!(
            "# Top\n[a]({}) [b](#top) [c](#nope) [d](missing.md) `shared/DESIGN.md`\n```\n[e](x.md)\n```\n",
            file.display()
        ),
    )
    .expect("write a scratch page");
    let problems = problems_in(&scratch, &root);
    let _ = std::fs::remove_file(&scratch);
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(
        problems[0].ends_with("missing heading #nope"),
        "{problems:?}"
    );
    assert!(problems[1].ends_with("missing missing.md"), "{problems:?}");
    assert!(
        problems[2].ends_with("missing file shared/DESIGN.md"),
        "{problems:?}"
    );
}

/// The words after `covey` of each command shown in `text`: inline code starting `covey `,
/// and code-block lines starting `covey ` (or `$ covey `).
fn commands(text: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        let mut shown = Vec::new();
        if in_block {
            let line = line.trim_start();
            shown.push(line.strip_prefix("$ ").unwrap_or(line));
        } else {
            shown.extend(line.split('`').skip(1).step_by(2));
        }
        for code in shown {
            if let Some(rest) = code.strip_prefix("covey ") {
                found.push(rest.split_whitespace().map(str::to_string).collect());
            }
        }
    }
    found
}

/// The subcommands `covey ARGS --help` lists.
fn subcommands(args: &[&str]) -> Vec<String> {
    let out = covey()
        .args(args)
        .arg("--help")
        .output()
        .expect("run covey");
    assert!(out.status.success(), "covey {args:?} --help: {out:?}");
    let help = stdout(&out);
    help.split("Commands:")
        .nth(1)
        .and_then(|s| s.split("Options:").next())
        .expect("a Commands: section")
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// What is wrong with the commands `text` shows.
fn command_problems(text: &str, top: &[String], entity: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for words in commands(text) {
        let Some(first) = words.first() else {
            continue;
        };
        // Flags and placeholders (`covey COMMAND`, `covey <cmd>`) are not commands.
        if !first.chars().all(|c| c.is_ascii_lowercase() || c == '-') || first.starts_with('-') {
            continue;
        }
        if !top.contains(first) {
            problems.push(format!("covey {first}: no such command"));
        } else if first == "entity" {
            if let Some(second) = words.get(1).filter(|w| !w.starts_with('-')) {
                if !entity.contains(second) {
                    problems.push(format!("covey entity {second}: no such command"));
                }
            }
        }
    }
    problems
}

#[test]
fn every_documented_command_exists() {
    let top = subcommands(&[]);
    let entity = subcommands(&["entity"]);
    assert!(top.contains(&"get".to_string()), "{top:?}");
    let root = root();
    let files = markdown_files(&root);
    assert!(
        files.iter().any(|f| f.ends_with("docs/security.md")),
        "{files:?}"
    );
    let mut all = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read a Markdown file");
        for p in command_problems(&text, &top, &entity) {
            all.push(format!(
                "{}: {p}",
                file.strip_prefix(&root).unwrap().display()
            ));
        }
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
}

#[test]
fn the_checker_sees_a_command_that_does_not_exist() {
    let top = ["get".to_string(), "entity".to_string()];
    let entity = ["list".to_string()];
    let text = "Try `covey ping coap://h`.\n\n```sh\n$ covey entity lst coap://h\ncovey get coap://h\n```\ncovey is fast; `covey get -B 5`.\n";
    assert_eq!(
        command_problems(text, &top, &entity),
        [
            "covey ping: no such command",
            "covey entity lst: no such command"
        ]
    );
}
