//! A process of a run (an agent, a broker) inside a namespace: its events are collected from
//! its standard output as it runs, and it is killed when dropped, so that no run leaves a
//! process behind.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::telemetry::AgentEvent;
use crate::LabError;

/// Events a process has reported, with a signal for waiters.
#[derive(Debug, Default)]
struct Reported {
    events: Mutex<Vec<AgentEvent>>,
    changed: Condvar,
}

/// A running process, killed on drop.
#[derive(Debug)]
pub struct AgentProcess {
    name: String,
    child: Child,
    reported: Arc<Reported>,
    reader: Option<JoinHandle<()>>,
}

impl AgentProcess {
    /// Starts `command`, named `name` in errors; its stderr goes to the null device.
    pub fn spawn(name: &str, mut command: Command) -> Result<AgentProcess, LabError> {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| LabError::Stack(format!("cannot start {name}: {e}")))?;
        let reported = Arc::new(Reported::default());
        let reader = child.stdout.take().map(|stdout| {
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
        Ok(AgentProcess {
            name: name.to_string(),
            child,
            reported,
            reader,
        })
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
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return done(&events);
            }
        }
    }

    /// Waits (up to `timeout`) for the process to say it is ready.
    pub fn wait_ready(&mut self, timeout: Duration) -> Result<(), LabError> {
        if self.wait_for(timeout, |e| e.contains(&AgentEvent::Ready)) {
            Ok(())
        } else {
            Err(LabError::Stack(format!(
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
        let _ = self.child.kill();
        let _ = self.child.wait();
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
