//! The emulator's error type.

/// Why the emulator could not set up, run or tear down a testbed, or a real stack in it
/// failed.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// Not running as root: namespaces and TUN devices need CAP_NET_ADMIN.
    #[error(
        "the emulator needs root (CAP_NET_ADMIN) for network namespaces and TUN devices; \
         run it as root, e.g. `sudo -E cargo test -p covey-emu --test emulator`"
    )]
    NotRoot,
    /// A tool or device the emulator needs is missing.
    #[error("the emulator needs {what}: {hint}")]
    Missing {
        /// What is missing.
        what: &'static str,
        /// How to get it.
        hint: &'static str,
    },
    /// An `ip` command failed.
    #[error("`{command}` failed: {message}")]
    Command {
        /// The command line.
        command: String,
        /// Its standard error or exit status.
        message: String,
    },
    /// A system call failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The testbed description is inconsistent.
    #[error("invalid testbed: {0}")]
    Invalid(String),
    /// No node of that name in this testbed.
    #[error("no node named `{0}` in this testbed")]
    UnknownNode(String),
    /// No supervised process with that id.
    #[error("no process {0} in this testbed")]
    UnknownProcess(usize),
    /// The run was interrupted (Ctrl-C, SIGTERM): nothing more is started.
    #[error("interrupted")]
    Interrupted,
    /// A real stack failed (a socket, a broker, a child process), or a program it needs is
    /// missing.
    #[error("stack: {0}")]
    Stack(String),
    /// An agent description or a stack option is malformed or out of range.
    #[error("invalid option: {0}")]
    InvalidOption(String),
}

impl EmuError {
    /// An I/O error while doing `what`.
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> EmuError {
        EmuError::Io {
            what: what.into(),
            source,
        }
    }

    /// A failed system call (nix) while doing `what`.
    pub(crate) fn sys(what: impl Into<String>, errno: nix::errno::Errno) -> EmuError {
        EmuError::io(what, std::io::Error::from(errno))
    }
}
