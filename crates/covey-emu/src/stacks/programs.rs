//! Finds the external programs the stacks run (Mosquitto, Cyclone DDS's Python binding).
//! The library installs nothing: `scripts/lab-stacks.sh` installs them, and a missing one is
//! an error that names the script.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::EmuError;

/// Debian's Mosquitto broker.
pub const MOSQUITTO: &str = "/usr/sbin/mosquitto";

/// Where the DDS virtual environment lives, under the target folder (relative to the
/// repository root, where `scripts/lab-stacks.sh` creates it).
pub const DDS_VENV: &str = "target/dds-venv";

/// Where the DDS-over-TCP virtual environment lives: the Python binding (0.10) built against
/// Debian's Cyclone DDS C library (0.10.2), because the PyPI wheels' library is built
/// without the TCP transport (their configuration rejects `General/Transport` = `tcp` and
/// the `TCP` element).
pub const DDS_TCP_VENV: &str = "target/dds-tcp-venv";

/// The script that installs the external programs (run from the repository root).
pub const SETUP_SCRIPT: &str = "scripts/lab-stacks.sh";

/// Mosquitto's path, or an error naming [`SETUP_SCRIPT`] when it is not installed.
pub fn mosquitto() -> Result<PathBuf, EmuError> {
    let path = PathBuf::from(MOSQUITTO);
    if path.exists() {
        return Ok(path);
    }
    Err(EmuError::Stack(format!(
        "Mosquitto is not installed ({MOSQUITTO} is missing); run `{SETUP_SCRIPT}`"
    )))
}

/// The Python interpreter of the virtual environment at `venv` when it imports `cyclonedds`,
/// or an error naming [`SETUP_SCRIPT`].
pub fn dds_python(venv: &Path) -> Result<PathBuf, EmuError> {
    let python = venv.join("bin/python3");
    let imports = Command::new(&python)
        .args(["-c", "import cyclonedds.domain"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if imports {
        return Ok(python);
    }
    Err(EmuError::Stack(format!(
        "Cyclone DDS for Python is not installed in {}; run `{SETUP_SCRIPT}`",
        venv.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_dds_environment_names_the_setup_script() {
        let e = dds_python(Path::new("/nonexistent/dds-venv")).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(SETUP_SCRIPT), "{text}");
        assert!(!text.contains('\n'), "one line: {text}");
    }
}
