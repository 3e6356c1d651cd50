//! What a scenario run wrote, sorted for its report page: plots to show, data to link, and
//! data too large to keep in the repository.

use std::path::{Path, PathBuf};

use crate::scenarios::Summary;
use crate::LabError;

/// Raw data larger than this stays out of a report (`covey lab run` regenerates it).
pub const LARGE_BYTES: u64 = 200 * 1024;

/// A file of a run, by its name inside the scenario's folder.
#[derive(Debug, Clone)]
pub struct DataFile {
    /// The file name.
    pub name: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// A run's files, sorted for the report page.
#[derive(Debug, Default)]
pub struct DataFiles {
    /// SVG plots, shown on the page.
    pub plots: Vec<DataFile>,
    /// Data small enough to keep, linked from the page.
    pub kept: Vec<DataFile>,
    /// Data larger than [`LARGE_BYTES`], deleted from the report folder.
    pub left_out: Vec<DataFile>,
}

/// Sorts the files `summary` lists. Deletes the large ones and the scenario's own Markdown
/// page, which the report page includes whole.
pub fn sort(summary: &Summary) -> Result<DataFiles, LabError> {
    let mut sorted = DataFiles::default();
    for path in &summary.files {
        let io = |source: std::io::Error| LabError::Read {
            path: path.clone(),
            source,
        };
        let bytes = std::fs::metadata(path).map_err(io)?.len();
        let file = DataFile {
            name: file_name(path),
            bytes,
        };
        match extension(path).as_deref() {
            Some("svg") => sorted.plots.push(file),
            Some("md") if std::fs::read_to_string(path).map_err(io)? == summary.markdown => {
                remove(path)?;
            }
            _ if bytes > LARGE_BYTES => {
                remove(path)?;
                sorted.left_out.push(file);
            }
            _ => sorted.kept.push(file),
        }
    }
    Ok(sorted)
}

/// `bytes` for people: "12 kB", "3.4 MB".
pub fn human_size(bytes: u64) -> String {
    if bytes < 1000 * 1000 {
        format!("{} kB", bytes.div_ceil(1000))
    } else {
        format!("{:.1} MB", bytes as f64 / 1e6)
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy()
        .into_owned()
}

fn extension(path: &Path) -> Option<String> {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}

fn remove(path: &PathBuf) -> Result<(), LabError> {
    std::fs::remove_file(path).map_err(|source| LabError::Remove {
        path: path.clone(),
        source,
    })
}
