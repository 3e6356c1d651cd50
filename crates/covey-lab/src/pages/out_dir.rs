//! Checking that an output directory can be written before a long run starts, without
//! leaving anything behind.

use std::path::{Path, PathBuf};

use crate::LabError;

/// Fails unless `dir` is, or can be created as, a writable directory. Creates nothing.
pub fn check_writable(dir: &Path) -> Result<(), LabError> {
    let fail = |why: String| LabError::OutDir {
        dir: dir.to_path_buf(),
        why,
    };
    // The directory itself, or the nearest ancestor that exists (the run creates the rest).
    let mut existing: PathBuf = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir.to_path_buf()
    };
    while !existing.exists() {
        existing = match existing.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
    }
    if !existing.is_dir() {
        return Err(fail(format!("{} is not a directory", existing.display())));
    }
    // Permission bits do not tell about read-only mounts or root: try it.
    let probe = existing.join(format!(".covey-lab-probe-{}", std::process::id()));
    std::fs::create_dir(&probe)
        .and_then(|()| std::fs::remove_dir(&probe))
        .map_err(|e| {
            fail(format!(
                "cannot create anything in {} ({e})",
                existing.display()
            ))
        })
}

/// The report folder of `covey lab report` without `--out`: the Covey repository's docs/lab
/// when `cwd` is inside the repository (a folder at or above it holds crates/covey-lab and
/// docs/lab), wherever in it the command runs; `None` elsewhere, so that a report never
/// lands in the docs/lab of some other project.
pub fn default_report_dir(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|dir| {
            dir.join("crates/covey-lab/Cargo.toml").is_file() && dir.join("docs/lab").is_dir()
        })
        .map(|repo| repo.join("docs/lab"))
}
