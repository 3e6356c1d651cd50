//! A trial's scratch folder for the configuration files and scripts its stacks read (the
//! broker's configuration, the DDS script): one per trial, so that every trial stands alone
//! (shards of one sweep may run side by side), removed when the trial ends. A run stopped
//! with Ctrl-C exits without ending its trial; the next trial removes what such runs left.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::LabError;

/// A fresh folder under the system's temporary folder, removed on drop.
#[derive(Debug)]
pub struct WorkDir(PathBuf);

impl WorkDir {
    /// A new, empty folder named after `scenario`, this process and a counter.
    pub fn new(scenario: &str) -> Result<WorkDir, LabError> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let prefix = format!("covey-lab-{scenario}-");
        remove_left_behind(&prefix);
        let path = std::env::temp_dir().join(format!("{prefix}{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|source| LabError::Io {
            path: path.clone(),
            source,
        })?;
        Ok(WorkDir(path))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

/// Removes the folders `<prefix><pid>-<n>` of processes that no longer run.
fn remove_left_behind(prefix: &str) {
    let temp = std::env::temp_dir();
    let Ok(entries) = std::fs::read_dir(&temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.split_once('-'))
            .filter(|(_, n)| n.parse::<usize>().is_ok())
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_trial_gets_its_own_folder_and_it_goes_when_the_trial_ends() {
        let a = WorkDir::new("test").unwrap();
        let b = WorkDir::new("test").unwrap();
        assert_ne!(a.path(), b.path());
        std::fs::write(a.path().join("f"), b"x").unwrap();
        let kept = a.path().to_path_buf();
        drop(a);
        assert!(!kept.exists());
        assert!(b.path().is_dir());
    }

    #[test]
    fn folders_of_runs_that_were_stopped_are_removed() {
        // No process has the largest pid; this one runs.
        let temp = std::env::temp_dir();
        let stopped = temp.join(format!("covey-lab-left-behind-{}-0", u32::MAX));
        let running = temp.join(format!("covey-lab-left-behind-{}-9", std::process::id()));
        for dir in [&stopped, &running] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let new = WorkDir::new("left-behind").unwrap();
        assert!(!stopped.exists());
        assert!(running.is_dir() && new.path().is_dir());
        std::fs::remove_dir_all(running).unwrap();
    }
}
