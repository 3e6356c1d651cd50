//! The lab's error type.

use std::path::PathBuf;

/// Why a lab run or report failed.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// No scenario has this name.
    #[error("unknown scenario `{0}` (see `covey lab list`)")]
    UnknownScenario(String),
    /// An option is out of range.
    #[error("invalid option: {0}")]
    InvalidOption(String),
    /// Writing a report file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A folder results are to go to cannot be written.
    #[error("cannot write results to {dir}: {why}")]
    OutDir {
        /// The folder.
        dir: PathBuf,
        /// Why not.
        why: String,
    },
    /// Reading a file a run wrote failed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Removing a file a run wrote, too large for a report, failed.
    #[error("cannot remove {path}: {source}")]
    Remove {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Telling a report's progress failed (standard output could not be written).
    #[error("{0}")]
    Output(String),
    /// Serialising results to JSON failed.
    #[error("cannot encode results as JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Drawing a plot failed.
    #[error("cannot draw {path}: {message}")]
    Plot {
        /// The file.
        path: PathBuf,
        /// What the plotting backend said.
        message: String,
    },
    /// A shard file is unreadable, or shards do not belong together.
    #[error("shards: {0}")]
    Shard(String),
    /// Writing a CSV table failed.
    #[error("cannot write CSV: {0}")]
    Csv(String),
    /// A real stack in the emulator failed (a socket, a broker, a child process).
    #[error("stack: {0}")]
    Stack(String),
    /// The emulator could not set up, run or tear down a testbed.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Emu(covey_emu::EmuError),
}

/// The emulator's errors as the lab's: a failed stack stays [`LabError::Stack`] and a bad
/// option [`LabError::InvalidOption`], as when the stacks were part of the lab; the rest are
/// [`LabError::Emu`].
#[cfg(target_os = "linux")]
impl From<covey_emu::EmuError> for LabError {
    fn from(e: covey_emu::EmuError) -> LabError {
        match e {
            covey_emu::EmuError::Stack(why) => LabError::Stack(why),
            covey_emu::EmuError::InvalidOption(why) => LabError::InvalidOption(why),
            other => LabError::Emu(other),
        }
    }
}
