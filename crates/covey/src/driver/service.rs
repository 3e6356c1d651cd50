//! What answers incoming requests for the driver: a [`Service`] such as the server's router.

use std::future::Future;
use std::pin::Pin;

use covey_proto::Received;

use crate::{Request, Response};

/// A response still being computed.
pub type ResponseFuture = Pin<Box<dyn Future<Output = Response> + Send>>;

/// Answers incoming requests; the driver polls the future once in place and spawns it only
/// when it is not ready, so synchronous handlers cost no task.
pub trait Service: Send + Sync + 'static {
    /// Whether this service answers `request`; otherwise a hosted App gets it. Asked of the
    /// engine's view of the request, before anything is copied out of it.
    fn accepts(&self, _request: &Received<'_>) -> bool {
        true
    }

    /// The observable resource `request` addresses, as a number the engine keys observers
    /// by; `None` when it is not observable.
    fn observable(&self, _request: &Request) -> Option<u64> {
        None
    }

    /// Computes the response to `request`.
    fn call(&self, request: Request) -> ResponseFuture;
}
