//! The client exchanges the async API started, by engine id and by the API's ticket.

use std::collections::HashMap;
use std::net::SocketAddr;

use covey_proto::RequestId;

use super::command::Waiter;
use crate::{Error, Response};

/// One outstanding exchange.
#[derive(Debug)]
struct Exchange {
    ticket: u64,
    remote: SocketAddr,
    waiter: Waiter,
}

/// Outstanding exchanges of the async API (the hosted App's requests are not here).
#[derive(Debug, Default)]
pub(crate) struct Exchanges {
    by_id: HashMap<RequestId, Exchange>,
    by_ticket: HashMap<u64, RequestId>,
}

impl Exchanges {
    /// Records a started exchange.
    pub fn insert(&mut self, id: RequestId, ticket: u64, remote: SocketAddr, waiter: Waiter) {
        self.by_ticket.insert(ticket, id);
        self.by_id.insert(
            id,
            Exchange {
                ticket,
                remote,
                waiter,
            },
        );
    }

    /// Moves the exchange of `old` to `new` (a deregistration continues an observation).
    pub fn rekey(&mut self, old: RequestId, new: RequestId) {
        if let Some(ex) = self.by_id.remove(&old) {
            self.by_ticket.insert(ex.ticket, new);
            self.by_id.insert(new, ex);
        }
    }

    /// The engine id of `ticket`.
    pub fn id_of(&self, ticket: u64) -> Option<RequestId> {
        self.by_ticket.get(&ticket).copied()
    }

    /// Ends exchange `id` without another item: its stream simply ends, and a caller still
    /// waiting for its one response (a multicast request nobody answered) learns that
    /// none came in time.
    pub fn finish(&mut self, id: RequestId) {
        if let Some(ex) = self.remove(id) {
            if let Waiter::Once(_) = ex.waiter {
                let mut waiter = ex.waiter;
                waiter.send(Err(Error::Timeout(ex.remote)));
            }
        }
    }

    /// Whether `id` belongs to the async API.
    pub fn contains(&self, id: RequestId) -> bool {
        self.by_id.contains_key(&id)
    }

    /// Number of outstanding exchanges.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Forgets the exchange of `ticket`, returning its engine id.
    pub fn remove_ticket(&mut self, ticket: u64) -> Option<RequestId> {
        let id = self.by_ticket.remove(&ticket)?;
        self.by_id.remove(&id);
        Some(id)
    }

    /// Hands a response over; returns false when the exchange should be cancelled in the
    /// engine because nobody listens any more.
    pub fn deliver(&mut self, id: RequestId, response: Response, last: bool) -> bool {
        if last {
            if let Some(ex) = self.remove(id) {
                let mut waiter = ex.waiter;
                waiter.send(Ok(response));
            }
            return true;
        }
        let listening = match self.by_id.get_mut(&id) {
            Some(ex) => ex.waiter.send(Ok(response)),
            None => return true,
        };
        if !listening {
            self.remove(id);
        }
        listening
    }

    /// Ends the exchange `id` with an error.
    pub fn fail(&mut self, id: RequestId, error: Error) {
        if let Some(ex) = self.remove(id) {
            let mut waiter = ex.waiter;
            waiter.send(Err(error));
        }
    }

    /// The remote of exchange `id`.
    pub fn remote(&self, id: RequestId) -> Option<SocketAddr> {
        self.by_id.get(&id).map(|ex| ex.remote)
    }

    /// Exchanges towards `remote`.
    pub fn towards(&self, remote: SocketAddr) -> Vec<RequestId> {
        self.by_id
            .iter()
            .filter(|(_, ex)| ex.remote == remote)
            .map(|(id, _)| *id)
            .collect()
    }

    /// Exchanges whose receiver was dropped.
    pub fn abandoned(&self) -> Vec<RequestId> {
        self.by_id
            .iter()
            .filter(|(_, ex)| ex.waiter.is_closed())
            .map(|(id, _)| *id)
            .collect()
    }

    /// Every exchange id.
    pub fn ids(&self) -> Vec<RequestId> {
        self.by_id.keys().copied().collect()
    }

    fn remove(&mut self, id: RequestId) -> Option<Exchange> {
        let ex = self.by_id.remove(&id)?;
        self.by_ticket.remove(&ex.ticket);
        Some(ex)
    }
}
