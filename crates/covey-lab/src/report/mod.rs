//! Writers for scenario results: CSV tables, JSON documents, SVG line charts and Markdown
//! tables. Scenarios decide what goes in them.

pub mod folder;
pub mod json;
pub mod markdown;
pub mod rows;
pub mod svg;

use std::path::Path;

use crate::LabError;

/// Creates `dir` and its parents if missing.
pub fn ensure_dir(dir: &Path) -> Result<(), LabError> {
    std::fs::create_dir_all(dir).map_err(|source| LabError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

/// Writes `text` to `path`.
pub fn write_text(path: &Path, text: &str) -> Result<(), LabError> {
    std::fs::write(path, text).map_err(|source| LabError::Io {
        path: path.to_path_buf(),
        source,
    })
}
