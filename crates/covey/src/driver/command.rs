//! What the async API asks of the driver task, and how answers flow back.

use std::net::SocketAddr;

use covey_core::{Code, Token};
use covey_proto::Stats;
use tokio::sync::{mpsc, oneshot};

use crate::{Error, Options, Response};

/// A request to send, owned so it can cross the channel.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    pub method: Code,
    pub options: Options,
    pub payload: Vec<u8>,
    pub confirmable: bool,
    pub token: Option<Token>,
    /// The local socket to send from (a coaps or coap one on a driver with both).
    pub source: Option<SocketAddr>,
    /// The OSCORE context to protect it with, by its place among the driver's.
    pub oscore: Option<usize>,
    /// EDHOC message_3 for its first message to carry (RFC 9668).
    pub edhoc_message_3: Option<Vec<u8>>,
}

/// Where the responses of one client exchange go.
#[derive(Debug)]
pub(crate) enum Waiter {
    /// One response (or failure) ends it.
    Once(oneshot::Sender<Result<Response, Error>>),
    /// Several responses (observe, multicast); the exchange ends when the receiver is dropped.
    Stream(mpsc::Sender<Result<Response, Error>>),
}

impl Waiter {
    /// Hands over a response or failure; false when nobody listens any more.
    pub fn send(&mut self, item: Result<Response, Error>) -> bool {
        match self {
            Waiter::Once(tx) => {
                // A oneshot is consumed by sending: swap in a closed one.
                let (dummy, _) = oneshot::channel();
                let tx = std::mem::replace(tx, dummy);
                tx.send(item).is_ok()
            }
            // A full stream drops the item: the consumer is behind, newer items follow.
            Waiter::Stream(tx) => match tx.try_send(item) {
                Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => true,
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            },
        }
    }

    /// True when the receiving side is gone.
    pub fn is_closed(&self) -> bool {
        match self {
            Waiter::Once(tx) => tx.is_closed(),
            Waiter::Stream(tx) => tx.is_closed(),
        }
    }
}

/// A command for the driver task.
#[derive(Debug)]
pub(crate) enum Command {
    /// Start a client exchange identified by `ticket`.
    Request {
        ticket: u64,
        remote: SocketAddr,
        request: Outgoing,
        waiter: Waiter,
    },
    /// Send a CoAP ping; the pong arrives as an Empty response.
    Ping {
        ticket: u64,
        remote: SocketAddr,
        waiter: Waiter,
    },
    /// Abandon the exchange of `ticket`.
    Cancel { ticket: u64 },
    /// End the observation of `ticket` politely (GET with Observe 1).
    Deregister { ticket: u64 },
    /// Notify the observers of `resource` with `response`, sent as `kind`; replies how many
    /// were notified.
    Notify {
        resource: u64,
        response: Response,
        kind: covey_proto::NotificationType,
        reply: oneshot::Sender<usize>,
    },
    /// Report the engine's counters.
    Stats(oneshot::Sender<Stats>),
    /// The DTLS session table's state (`None` on a driver without DTLS).
    DtlsState(oneshot::Sender<Option<crate::dtls::DtlsState>>),
    /// Stop once in-flight exchanges have finished (or the grace period ran out).
    Shutdown(oneshot::Sender<()>),
}
