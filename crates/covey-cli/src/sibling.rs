//! The programs installed beside `covey`: `covey gateway …` runs `covey-gateway …` as git
//! runs `git-foo` for `git foo`, so that each program links only the code it runs.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Args;

use crate::exit::{ExitKind, Failure};

/// A subcommand's arguments, handed unparsed to the program that runs it.
#[derive(Debug, Args)]
pub struct PassThrough {
    /// The subcommand's arguments (see its --help).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub args: Vec<OsString>,
}

/// The program `name` beside the running one, else on `PATH`.
pub fn program(name: &str) -> Result<PathBuf, Failure> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(name)))
        .filter(|p| p.is_file());
    beside
        .or_else(|| on_path(name, std::env::var_os("PATH")))
        .ok_or_else(|| {
            Failure::new(
                ExitKind::Other,
                format!(
                    "{name} is not installed beside covey or on PATH; \
                     build it with `cargo build --release -p covey-cli` \
                     (or install with `cargo install --path crates/covey-cli`)"
                ),
            )
        })
}

/// The first `dir/name` that is a file, over the directories of `path`.
fn on_path(name: &str, path: Option<OsString>) -> Option<PathBuf> {
    std::env::split_paths(&path?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Replaces this process with `name lead… args…`; returns only if that fails.
pub fn run(name: &str, lead: &[&str], args: Vec<OsString>) -> Result<(), Failure> {
    let path = program(name)?;
    let mut command = Command::new(&path);
    command.args(lead).args(args);
    Err(exec(&path, command))
}

#[cfg(unix)]
fn exec(path: &Path, mut command: Command) -> Failure {
    use std::os::unix::process::CommandExt;
    let e = command.exec();
    Failure::new(
        ExitKind::Other,
        format!("cannot run {}: {e}", path.display()),
    )
}

#[cfg(not(unix))]
fn exec(path: &Path, mut command: Command) -> Failure {
    match command.status() {
        Ok(status) => {
            let code = status.code().unwrap_or(1);
            std::process::exit(code)
        }
        Err(e) => Failure::new(
            ExitKind::Other,
            format!("cannot run {}: {e}", path.display()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let e = program("covey-no-such-program").unwrap_err();
        assert!(
            e.message.contains("cargo build --release -p covey-cli"),
            "{}",
            e.message
        );
    }
}
