//! A task on a current-thread tokio runtime on a named thread of its own, stopped on request.

use std::future::Future;
use std::sync::mpsc;
use std::thread::JoinHandle;

use tokio::sync::oneshot;

use crate::BenchError;

/// A thread running one task on its own runtime until told to stop.
pub struct RuntimeThread {
    stop: oneshot::Sender<()>,
    thread: JoinHandle<()>,
}

impl RuntimeThread {
    /// Runs `task(ready, stop)` on a thread called `name` and returns what it sends on `ready`.
    ///
    /// The task reports once through `ready` (its value, or why it could not start) and
    /// then runs until `stop` fires; `what` names the thread in errors.
    pub fn start<T, F, Fut>(
        name: &str,
        what: &str,
        task: F,
    ) -> Result<(RuntimeThread, T), BenchError>
    where
        T: Send + 'static,
        F: FnOnce(mpsc::Sender<Result<T, BenchError>>, oneshot::Receiver<()>) -> Fut
            + Send
            + 'static,
        Fut: Future<Output = ()>,
    {
        let (ready_tx, ready_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = ready_tx.send(Err(other(format!("cannot start runtime: {e}"))));
                        return;
                    }
                };
                runtime.block_on(task(ready_tx, stop_rx));
            })
            .map_err(|e| other(format!("cannot start {what}: {e}")))?;
        let value = ready_rx
            .recv()
            .map_err(|_| other(format!("{what} ended")))??;
        Ok((
            RuntimeThread {
                stop: stop_tx,
                thread,
            },
            value,
        ))
    }

    /// Tells the task to stop and waits for its thread to end.
    pub fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}

fn other(message: String) -> BenchError {
    BenchError::Other(message)
}
