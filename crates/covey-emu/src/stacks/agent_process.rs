//! A process of a run (an agent, a broker) inside a namespace: its events are collected from
//! its standard output as it runs, and it is stopped when dropped, so that no run leaves a
//! process behind. Who started it stops it: the testbed (which also stops it when the run is
//! interrupted), or this handle for a plain child.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::telemetry::AgentEvent;
use crate::EmuError;

/// Events a process has reported, with a signal for waiters.
#[derive(Debug, Default)]
struct Reported {
    events: Mutex<Vec<AgentEvent>>,
    changed: Condvar,
}

/// Stops a process and tells whether it has ended.
pub trait ProcessControl: Send + std::fmt::Debug {
    /// Whether the process has ended.
    fn has_exited(&mut self) -> bool;
    /// Stops the process (if still running) and reaps it.
    fn stop(&mut self);
}

/// A child this program started itself.
#[derive(Debug)]
struct OwnChild(Child);

impl ProcessControl for OwnChild {
    fn has_exited(&mut self) -> bool {
        matches!(self.0.try_wait(), Ok(Some(_)))
    }

    fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running process, stopped on drop.
#[derive(Debug)]
pub struct AgentProcess {
    name: String,
    control: Box<dyn ProcessControl>,
    reported: Arc<Reported>,
    reader: Option<JoinHandle<()>>,
}

/// Sets `command`'s stdio as an agent needs it: events on a pipe, nothing else.
pub fn agent_stdio(command: &mut Command) {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
}

impl AgentProcess {
    /// Starts `command` as a child of this program, named `name` in errors.
    pub fn spawn(name: &str, mut command: Command) -> Result<AgentProcess, EmuError> {
        agent_stdio(&mut command);
        let mut child = command
            .spawn()
            .map_err(|e| EmuError::Stack(format!("cannot start {name}: {e}")))?;
        let stdout = child.stdout.take();
        Ok(AgentProcess::watch(name, stdout, Box::new(OwnChild(child))))
    }

    /// Watches a started process: reads its events from `stdout`, stops it with `control`.
    pub fn watch(
        name: &str,
        stdout: Option<ChildStdout>,
        control: Box<dyn ProcessControl>,
    ) -> AgentProcess {
        let reported = Arc::new(Reported::default());
        let reader = stdout.map(|stdout| {
            let reported = reported.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if let Some(event) = AgentEvent::parse(&line) {
                        if let Ok(mut events) = reported.events.lock() {
                            events.push(event);
                        }
                        reported.changed.notify_all();
                    }
                }
            })
        });
        AgentProcess {
            name: name.to_string(),
            control,
            reported,
            reader,
        }
    }

    /// Waits until `done` holds for the events so far, the process ends, or `timeout`
    /// passes; returns whether `done` held.
    pub fn wait_for(&mut self, timeout: Duration, done: impl Fn(&[AgentEvent]) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        let Ok(mut events) = self.reported.events.lock() else {
            return false;
        };
        loop {
            if done(&events) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            let wait = (deadline - now).min(Duration::from_millis(100));
            events = match self.reported.changed.wait_timeout(events, wait) {
                Ok((e, _)) => e,
                Err(_) => return false,
            };
            if self.control.has_exited() {
                return done(&events);
            }
        }
    }

    /// Waits (up to `timeout`) for the process to say it is ready.
    pub fn wait_ready(&mut self, timeout: Duration) -> Result<(), EmuError> {
        if self.wait_for(timeout, |e| e.contains(&AgentEvent::Ready)) {
            Ok(())
        } else {
            Err(EmuError::Stack(format!(
                "{} did not become ready within {:.0} s",
                self.name,
                timeout.as_secs_f64()
            )))
        }
    }

    /// The events reported so far.
    pub fn events(&self) -> Vec<AgentEvent> {
        self.reported
            .events
            .lock()
            .map(|e| e.clone())
            .unwrap_or_default()
    }

    /// Kills the process (if still running) and returns every event it reported.
    pub fn stop(mut self) -> Vec<AgentEvent> {
        self.kill();
        self.events()
    }

    fn kill(&mut self) {
        self.control.stop();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
