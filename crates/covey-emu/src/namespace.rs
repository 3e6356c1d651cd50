//! Network namespaces, made and removed with iproute2's `ip netns` so that they are the
//! named, bind-mounted namespaces every tool knows (`ip netns exec`, `ip -n`), and entered
//! per thread with setns(2) so a thread can open sockets or devices inside one.

use std::fs::File;
use std::process::Command;

use nix::sched::{setns, CloneFlags};

use super::EmuError;

/// Where `ip netns` keeps its named namespaces.
const NETNS_DIR: &str = "/run/netns";

/// A named network namespace, removed on drop.
#[derive(Debug)]
pub struct Namespace {
    name: String,
}

impl Namespace {
    /// Creates the namespace `name` with its loopback up.
    pub fn create(name: &str) -> Result<Namespace, EmuError> {
        ip(&["netns", "add", name])?;
        let ns = Namespace {
            name: name.to_owned(),
        };
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// The namespace's name, as `ip netns exec NAME` takes it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `ip -n NAME args…`.
    pub fn ip(&self, args: &[&str]) -> Result<(), EmuError> {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        ip(&all)
    }

    /// Runs `f` on a thread that has entered the namespace: sockets and devices it opens
    /// belong to the namespace, and processes it spawns start inside it.
    pub fn run_inside<T, F>(&self, f: F) -> Result<T, EmuError>
    where
        T: Send,
        F: FnOnce() -> T + Send,
    {
        let path = format!("{NETNS_DIR}/{}", self.name);
        let file = File::open(&path).map_err(|e| EmuError::io(format!("open {path}"), e))?;
        let joined = std::thread::scope(|s| {
            s.spawn(move || {
                setns(&file, CloneFlags::CLONE_NEWNET)
                    .map_err(|e| EmuError::sys(format!("setns into {path}"), e))?;
                Ok(f())
            })
            .join()
        });
        match joined {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        // Nothing to report to: a namespace that is already gone is what we want.
        let _ = ip(&["netns", "del", &self.name]);
    }
}

/// Runs `ip args…`, turning a failure into an error that quotes ip's own message.
pub fn ip(args: &[&str]) -> Result<(), EmuError> {
    let command = format!("ip {}", args.join(" "));
    let out = Command::new("ip").args(args).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            EmuError::Missing {
                what: "iproute2's `ip`",
                hint: "apt-get install iproute2",
            }
        } else {
            EmuError::io(command.clone(), e)
        }
    })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(EmuError::Command {
            command,
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}

/// The names of the namespaces that exist now whose names start with `prefix`.
pub fn namespaces_with_prefix(prefix: &str) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    names
}
