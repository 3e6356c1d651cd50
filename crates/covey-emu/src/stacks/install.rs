//! Finds the external stacks (Mosquitto, Cyclone DDS's Python binding) and installs the ones
//! missing, or says which command installs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::EmuError;

/// Debian's Mosquitto broker.
pub const MOSQUITTO: &str = "/usr/sbin/mosquitto";

/// The command that installs Mosquitto.
pub const MOSQUITTO_INSTALL: &str = "apt-get install -y mosquitto";

/// Where the DDS virtual environment lives, under the target folder.
pub const DDS_VENV: &str = "target/dds-venv";

/// The Cyclone DDS release the lab runs (the test script pins the same).
pub const CYCLONEDDS_VERSION: &str = "11.0.1";

/// The command that installs Cyclone DDS's Python binding.
pub fn dds_install_command(venv: &Path) -> String {
    format!(
        "python3 -m venv {0} && {0}/bin/pip install cyclonedds=={CYCLONEDDS_VERSION}",
        venv.display()
    )
}

fn runs(command: &mut Command) -> bool {
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Mosquitto's path, installing it with apt-get when `install` is set and it is missing.
pub fn mosquitto(install: bool) -> Result<PathBuf, EmuError> {
    let path = PathBuf::from(MOSQUITTO);
    if path.exists() {
        return Ok(path);
    }
    if install
        && runs(
            Command::new("apt-get")
                .args(["install", "-y", "-q", "mosquitto"])
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )
        && path.exists()
    {
        return Ok(path);
    }
    Err(EmuError::Stack(format!(
        "Mosquitto is not installed; install it with `{MOSQUITTO_INSTALL}`"
    )))
}

/// The Python interpreter of a virtual environment at `venv` that imports `cyclonedds`,
/// creating it with pip when `install` is set and it is missing.
pub fn dds_python(venv: &Path, install: bool) -> Result<PathBuf, EmuError> {
    let python = venv.join("bin/python3");
    let works = |p: &Path| runs(Command::new(p).args(["-c", "import cyclonedds.domain"]));
    if works(&python) {
        return Ok(python);
    }
    if install
        && runs(Command::new("python3").arg("-m").arg("venv").arg(venv))
        && runs(Command::new(venv.join("bin/pip")).args([
            "install",
            "-q",
            &format!("cyclonedds=={CYCLONEDDS_VERSION}"),
        ]))
        && works(&python)
    {
        return Ok(python);
    }
    Err(EmuError::Stack(format!(
        "Cyclone DDS for Python is not installed; install it with `{}`",
        dds_install_command(venv)
    )))
}
