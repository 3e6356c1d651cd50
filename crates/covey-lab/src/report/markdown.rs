//! Markdown tables.

use std::fmt::Write as _;

/// A Markdown table; numeric-looking columns are right-aligned.
#[derive(Debug, Clone, Default)]
pub struct MarkdownTable {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl MarkdownTable {
    /// A table with these column names.
    pub fn new(header: &[&str]) -> MarkdownTable {
        MarkdownTable {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as Markdown.
    pub fn render(&self) -> String {
        let cell = |s: &str| s.replace('|', "\\|");
        let numeric = |col: usize| {
            self.rows.iter().all(|r| {
                r.get(col).is_none_or(|c| {
                    c.trim_end_matches('%')
                        .trim_end_matches(" s")
                        .replace(['–', '-', '.', ' ', '/'], "")
                        .chars()
                        .all(|ch| ch.is_ascii_digit())
                })
            })
        };
        let mut out = String::new();
        out.push('|');
        for h in &self.header {
            let _ = write!(out, " {} |", cell(h));
        }
        out.push_str("\n|");
        for i in 0..self.header.len() {
            out.push_str(if numeric(i) { "---:|" } else { "---|" });
        }
        out.push('\n');
        for r in &self.rows {
            out.push('|');
            for i in 0..self.header.len() {
                let _ = write!(out, " {} |", cell(r.get(i).map_or("", String::as_str)));
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_aligned_columns_and_escapes_pipes() {
        let mut t = MarkdownTable::new(&["name", "value"]);
        t.push(vec!["a|b".into(), "12.5 %".into()]);
        t.push(vec!["c".into(), "3".into()]);
        assert_eq!(
            t.render(),
            "| name | value |\n|---|---:|\n| a\\|b | 12.5 % |\n| c | 3 |\n"
        );
    }
}
