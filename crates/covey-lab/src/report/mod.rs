//! Writers for scenario results: CSV tables, JSON documents, SVG line charts and Markdown
//! tables. Scenarios decide what goes in them.

pub mod folder;
pub mod json;
pub mod markdown;
pub mod palette;
pub mod rows;
pub mod series_style;
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

/// `markdown` with a "## Plots" section before its first section: each plot embedded, the
/// note under it when the plot has one. The page renderer then adds no plot of its own.
pub fn with_plots(markdown: &str, plots: &[(String, Option<String>)]) -> String {
    let mut section = String::from("## Plots\n\n");
    for (file, note) in plots {
        let alt = file.trim_end_matches(".svg");
        section += &format!("![{alt}]({file})\n\n");
        if let Some(note) = note {
            section += &format!("{note}\n\n");
        }
    }
    let split = markdown
        .match_indices("\n## ")
        .next()
        .map_or(markdown.len(), |(i, _)| i + 1);
    let (intro, rest) = markdown.split_at(split);
    format!("{}\n\n{section}{rest}", intro.trim_end())
}
