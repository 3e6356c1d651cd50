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
    covey_cli_base::program::program(name).map_err(|e| Failure::new(ExitKind::Other, e.to_string()))
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
