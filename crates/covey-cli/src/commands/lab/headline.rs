//! The headline of a scenario's Markdown report: its first table, under its heading.

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
