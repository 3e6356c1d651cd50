//! Starts a run's processes inside the network's nodes: covey agents (the `covey` binary's
//! hidden `lab agent` subcommand), the Mosquitto broker and the Cyclone DDS agent script.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::agent_process::AgentProcess;
use super::network::Network;
use super::{programs, Agent};
use crate::EmuError;

/// Where the programs are and where a run's files go.
#[derive(Debug, Clone)]
pub struct Launcher {
    /// The `covey-lab` program (its `agent` subcommand runs the agents).
    pub covey: PathBuf,
    /// A folder for configuration files and scripts.
    pub work_dir: PathBuf,
}

impl Launcher {
    /// Agents run by the program running now (`covey-lab`), files in `work_dir`.
    pub fn from_current_exe(work_dir: &Path) -> Result<Launcher, EmuError> {
        let covey = std::env::current_exe()
            .map_err(|e| EmuError::Stack(format!("cannot find the covey binary: {e}")))?;
        Launcher::new(&covey, work_dir)
    }

    /// Agents run by `covey`, files in `work_dir` (created if missing).
    pub fn new(covey: &Path, work_dir: &Path) -> Result<Launcher, EmuError> {
        std::fs::create_dir_all(work_dir)
            .map_err(|e| EmuError::io(format!("cannot create {}", work_dir.display()), e))?;
        Ok(Launcher {
            covey: covey.to_path_buf(),
            work_dir: work_dir.to_path_buf(),
        })
    }

    /// Starts `agent` inside `node`.
    pub fn agent(
        &self,
        network: &dyn Network,
        node: &str,
        agent: &Agent,
    ) -> Result<AgentProcess, EmuError> {
        let mut command = Command::new(&self.covey);
        command.arg("agent").arg(agent.to_arg());
        network.spawn(node, &format!("{node} agent"), command)
    }

    /// Starts a Mosquitto broker inside `node` on `port`, with TCP_NODELAY on its client
    /// sockets if `nodelay` ([`super::mqtt::broker_command`]).
    pub fn mosquitto(
        &self,
        network: &dyn Network,
        node: &str,
        port: u16,
        nodelay: bool,
    ) -> Result<AgentProcess, EmuError> {
        programs::mosquitto()?;
        let broker = super::mqtt::broker_command(&self.work_dir, port, nodelay)?;
        network.spawn(node, "mosquitto", broker)
    }

    /// Starts `command` (a program with its arguments and environment) inside `node`.
    pub fn program(
        &self,
        network: &dyn Network,
        node: &str,
        name: &str,
        command: Command,
    ) -> Result<AgentProcess, EmuError> {
        network.spawn(node, name, command)
    }
}
