//! A CSV table (RFC 4180 quoting) built row by row.

use std::fmt::Write as _;
use std::path::Path;

use crate::LabError;

/// A CSV document.
#[derive(Debug, Clone, Default)]
pub struct CsvTable {
    text: String,
    columns: usize,
}

impl CsvTable {
    /// A table with these column names.
    pub fn new(header: &[&str]) -> CsvTable {
        let mut t = CsvTable {
            text: String::new(),
            columns: header.len(),
        };
        t.push(header.iter().copied());
        t
    }

    /// Appends a row (cells beyond the header's width are kept; fewer are padded).
    pub fn push<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut n = 0;
        for cell in cells {
            if n > 0 {
                self.text.push(',');
            }
            let cell = cell.as_ref();
            if cell.contains([',', '"', '\n', '\r']) {
                let _ = write!(self.text, "\"{}\"", cell.replace('"', "\"\""));
            } else {
                self.text.push_str(cell);
            }
            n += 1;
        }
        for _ in n..self.columns {
            self.text.push(',');
        }
        self.text.push('\n');
    }

    /// The document.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Writes the document to `path`.
    pub fn write(&self, path: &Path) -> Result<(), LabError> {
        super::write_text(path, &self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_cells_that_need_it_and_pads_short_rows() {
        let mut t = CsvTable::new(&["a", "b", "c"]);
        t.push(["1", "x,y", "say \"hi\""]);
        t.push(["2"]);
        assert_eq!(t.as_str(), "a,b,c\n1,\"x,y\",\"say \"\"hi\"\"\"\n2,,\n");
    }
}
