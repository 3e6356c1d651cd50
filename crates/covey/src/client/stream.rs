//! Several responses to one request: Observe notifications, or the answers to a multicast
//! request, each with its source.

use std::time::Duration;

use tokio::sync::mpsc;

use super::cancel::CancelGuard;
use crate::driver::{Command, Driver};
use crate::{Error, Response};

/// Items buffered before a slow consumer starts missing (older) notifications.
pub(crate) const STREAM_BUFFER: usize = 64;

/// How long [`ResponseStream::cancel`] waits for the deregistration's answer.
const DEREGISTER_WAIT: Duration = Duration::from_secs(5);

/// The responses to one request, in arrival order; dropping it cancels the exchange.
#[derive(Debug)]
pub struct ResponseStream {
    rx: mpsc::Receiver<Result<Response, Error>>,
    guard: Option<CancelGuard>,
    driver: Driver,
    ticket: u64,
}

impl ResponseStream {
    pub(crate) fn new(
        rx: mpsc::Receiver<Result<Response, Error>>,
        driver: Driver,
        ticket: u64,
    ) -> ResponseStream {
        ResponseStream {
            rx,
            guard: Some(CancelGuard::new(driver.clone(), ticket)),
            driver,
            ticket,
        }
    }

    /// The next response (or failure); `None` once the exchange is over.
    pub async fn next(&mut self) -> Option<Result<Response, Error>> {
        let item = self.rx.recv().await;
        if item.is_none() {
            if let Some(guard) = self.guard.take() {
                guard.disarm();
            }
        }
        item
    }

    /// Ends an observation politely (a GET with Observe 1, RFC 7641 §3.6) and returns the
    /// server's final response, if it came in time.
    pub async fn cancel(mut self) -> Option<Response> {
        let deregister = Command::Deregister {
            ticket: self.ticket,
        };
        if self.driver.command(deregister).await.is_err() {
            return None;
        }
        let mut last = None;
        let drain = async {
            while let Some(item) = self.next().await {
                if let Ok(response) = item {
                    last = Some(response);
                }
            }
        };
        let _ = tokio::time::timeout(DEREGISTER_WAIT, drain).await;
        last
    }
}
