//! The headline of a scenario's Markdown report: its first table, under its heading.

use std::path::Path;

use crate::scenarios::Summary;

/// What `covey lab run` and `merge` print: `done` (what ran), the files written into `out`,
/// and the report's headline table.
pub fn files_and_table(summary: &Summary, done: &str, out: &Path) -> String {
    let mut text = format!(
        "{}: {done}; files in {}:\n",
        summary.scenario,
        out.display()
    );
    for file in &summary.files {
        let name = file.file_name().unwrap_or(file.as_os_str());
        text += &format!("  {}\n", name.to_string_lossy());
    }
    if let Some(table) = first_table(&summary.markdown) {
        text += "\n";
        text += &table;
    }
    text
}

/// The first Markdown table of `markdown` with the heading above it, if any.
pub fn first_table(markdown: &str) -> Option<String> {
    let lines: Vec<&str> = markdown.lines().collect();
    let start = lines.iter().position(|l| l.trim_start().starts_with('|'))?;
    let end = lines[start..]
        .iter()
        .position(|l| !l.trim_start().starts_with('|'))
        .map_or(lines.len(), |n| start + n);
    let heading = lines[..start].iter().rev().find(|l| l.starts_with('#'));
    let mut out = String::new();
    if let Some(h) = heading {
        out += h;
        out += "\n\n";
    }
    for l in &lines[start..end] {
        out += l;
        out += "\n";
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::first_table;

    #[test]
    fn takes_the_first_table_and_its_heading() {
        let md =
            "# T\n\nintro\n\n## Share\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## More\n\n| c |\n";
        assert_eq!(
            first_table(md).as_deref(),
            Some("## Share\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
        );
        assert_eq!(first_table("no table"), None);
    }
}
