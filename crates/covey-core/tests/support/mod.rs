//! Helpers shared by the interop tests that drive external CoAP tools (libcoap, tshark).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// Fails the test, naming the Debian package to install, unless `program` can be started.
/// Runs it with `args` and returns the first output line starting with `banner` (its version).
pub fn require_tool(program: &str, args: &[&str], banner: &str, debian_package: &str) -> String {
    match Command::new(program).args(args).output() {
        Ok(out) => {
            let text = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
            let line = text.lines().find(|l| l.starts_with(banner));
            line.unwrap_or(banner).trim().to_string()
        }
        Err(e) => panic!(
            "this interop test needs `{program}`, which could not be started ({e}); \
             install the Debian package `{debian_package}` (apt-get install {debian_package}), \
             as scripts/test.sh does"
        ),
    }
}

/// Lower-case hex without separators.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A fresh directory under the system temp dir, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates `covey-<label>-<pid>-<nanos>` in the system temp dir.
    pub fn new(label: &str) -> TempDir {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir =
            std::env::temp_dir().join(format!("covey-{label}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
