//! Finding the programs installed beside `covey` (`covey-bench`, `covey-gateway`, … and
//! `covey` itself, which the benchmarks start as their server).

use std::ffi::OsString;
use std::path::PathBuf;

/// A program that is neither beside the running one nor on `PATH`.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0} is not installed beside covey or on PATH; \
     build it with `cargo build --release -p covey-cli` \
     (or install with `cargo install --path crates/covey-cli`)"
)]
pub struct NotInstalled(pub String);

/// The program `name` beside the running one, else on `PATH`.
pub fn program(name: &str) -> Result<PathBuf, NotInstalled> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(name)))
        .filter(|p| p.is_file());
    beside
        .or_else(|| on_path(name, std::env::var_os("PATH")))
        .ok_or_else(|| NotInstalled(name.to_string()))
}

/// The first `dir/name` that is a file, over the directories of `path`.
fn on_path(name: &str, path: Option<OsString>) -> Option<PathBuf> {
    std::env::split_paths(&path?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_program_is_found_on_path() {
        let dir = std::env::temp_dir().join(format!("covey-sibling-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("covey-test-program"), b"").unwrap();
        let path = std::env::join_paths([Path::new("/nonexistent"), &dir]).unwrap();
        assert_eq!(
            on_path("covey-test-program", Some(path.clone())),
            Some(dir.join("covey-test-program"))
        );
        assert_eq!(on_path("covey-missing-program", Some(path)), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_program_says_how_to_build_it() {
        let e = program("covey-no-such-program").unwrap_err().to_string();
        assert!(e.contains("cargo build --release -p covey-cli"), "{e}");
    }
}
