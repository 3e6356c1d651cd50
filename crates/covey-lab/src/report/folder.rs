//! The folder a scenario writes its report into: every file named after the scenario, and
//! the list of what was written for the run's summary.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::rows::write_rows;
use super::svg::{LineChart, Series};
use super::{ensure_dir, json::write_json, write_text};
use crate::framework::Summary;
use crate::LabError;

/// Files `<scenario>[-<suffix>].<ext>` in one folder, recorded as they are written.
#[derive(Debug)]
pub struct ReportFolder<'a> {
    dir: &'a Path,
    scenario: &'static str,
    written: Vec<PathBuf>,
}

impl<'a> ReportFolder<'a> {
    /// The folder `dir` (created if missing) for `scenario`'s files.
    pub fn create(dir: &'a Path, scenario: &'static str) -> Result<Self, LabError> {
        ensure_dir(dir)?;
        Ok(ReportFolder {
            dir,
            scenario,
            written: Vec::new(),
        })
    }

    fn path(&mut self, suffix: Option<&str>, extension: &str) -> PathBuf {
        let name = match suffix {
            Some(s) => format!("{}-{s}.{extension}", self.scenario),
            None => format!("{}.{extension}", self.scenario),
        };
        let path = self.dir.join(name);
        self.written.push(path.clone());
        path
    }

    /// Writes `rows` as `<scenario>-<suffix>.csv`, the header from the row type's fields.
    pub fn rows<T: Serialize>(&mut self, suffix: &str, rows: &[T]) -> Result<(), LabError> {
        write_rows(&self.path(Some(suffix), "csv"), rows)
    }

    /// Writes `chart` as `<scenario>[-<suffix>].svg`.
    pub fn svg(&mut self, suffix: Option<&str>, chart: &LineChart) -> Result<(), LabError> {
        chart.write(&self.path(suffix, "svg"))
    }

    /// Writes `chart` as `<scenario>[-<suffix>].svg` with the paper's points as markers.
    pub fn svg_with_paper(
        &mut self,
        suffix: Option<&str>,
        chart: &LineChart,
        paper: &[Series],
    ) -> Result<(), LabError> {
        chart.write_with_paper(&self.path(suffix, "svg"), paper)
    }

    /// Writes `value` as `<scenario>.json`.
    pub fn json<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), LabError> {
        write_json(&self.path(None, "json"), value)
    }

    /// Writes `markdown` as `<scenario>.md` and sums up the run.
    pub fn finish(
        mut self,
        runs: usize,
        wall_s: f64,
        markdown: String,
    ) -> Result<Summary, LabError> {
        write_text(&self.path(None, "md"), &markdown)?;
        Ok(Summary {
            scenario: self.scenario,
            runs,
            wall_s,
            files: self.written,
            markdown,
        })
    }
}
