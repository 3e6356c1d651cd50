//! CSV files from rows of a serde struct (the csv crate): the header is the struct's field
//! names, so a column cannot drift from its cells.

use std::path::Path;

use serde::Serialize;

use crate::LabError;

/// `rows` as a CSV document, header first (RFC 4180 quoting).
pub fn to_csv<T: Serialize>(rows: &[T]) -> Result<String, LabError> {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    for row in rows {
        writer
            .serialize(row)
            .map_err(|e| LabError::Csv(e.to_string()))?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| LabError::Csv(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| LabError::Csv(e.to_string()))
}

/// Writes `rows` as CSV to `path`.
pub fn write_rows<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), LabError> {
    super::write_text(path, &to_csv(rows)?)
}

/// A float written with `D` decimals, for columns where more digits are noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fixed<const D: usize>(pub f64);

impl<const D: usize> Serialize for Fixed<D> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{:.*}", D, self.0))
    }
}

/// A float written as Rust displays it: the shortest text that reads back the same, with no
/// `.0` on whole numbers (`10`, `0.25`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plain(pub f64);

impl Serialize for Plain {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Row {
        rate: f64,
        name: &'static str,
        share: Fixed<3>,
        whole: Plain,
        note: Option<u32>,
    }

    #[test]
    fn the_header_comes_from_the_fields_and_cells_are_quoted_when_needed() {
        let rows = [
            Row {
                rate: 10.0,
                name: "a,b",
                share: Fixed(0.98765),
                whole: Plain(10.0),
                note: None,
            },
            Row {
                rate: 0.5,
                name: "say \"hi\"",
                share: Fixed(1.0),
                whole: Plain(0.5),
                note: Some(3),
            },
        ];
        assert_eq!(
            to_csv(&rows).unwrap(),
            "rate,name,share,whole,note\n10.0,\"a,b\",0.988,10,\n0.5,\"say \"\"hi\"\"\",1.000,0.5,3\n"
        );
    }
}
