//! A resource: async handlers per method and the link attributes `/.well-known/core` shows.

use std::future::Future;
use std::sync::Arc;

use covey_core::{Code, ContentFormat};
use covey_proto::NotificationType;

use crate::driver::ResponseFuture;
use crate::{Request, Response};

/// A request handler: an async function from request to response.
pub type Handler = Arc<dyn Fn(Request) -> ResponseFuture + Send + Sync>;

/// Wraps an async function as a [`Handler`].
pub fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    Arc::new(move |request| Box::pin(f(request)))
}

/// Link attributes of a resource (RFC 6690 §3, RFC 7641 §6).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attributes {
    /// Resource types (`rt`).
    pub resource_types: Vec<String>,
    /// Interface descriptions (`if`).
    pub interfaces: Vec<String>,
    /// Content-Formats (`ct`).
    pub content_formats: Vec<u16>,
    /// Maximum size estimate (`sz`).
    pub size: Option<u32>,
    /// Observable (`obs`).
    pub observable: bool,
    /// Human-readable title.
    pub title: Option<String>,
}

/// The methods a resource can answer, each with its handler.
#[derive(Clone, Default)]
pub struct Resource {
    pub(crate) handlers: Vec<(Code, Handler)>,
    pub(crate) fallback: Option<Handler>,
    pub(crate) attributes: Attributes,
    pub(crate) hidden: bool,
    pub(crate) notifications: NotificationType,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource")
            .field(
                "methods",
                &self.handlers.iter().map(|(m, _)| *m).collect::<Vec<_>>(),
            )
            .field("any_method", &self.fallback.is_some())
            .field("attributes", &self.attributes)
            .field("notifications", &self.notifications)
            .finish()
    }
}

impl Resource {
    /// A resource answering no method yet (4.05 to everything).
    pub fn new() -> Resource {
        Resource::default()
    }

    /// Answers `method` with `f`.
    pub fn method<F, Fut>(mut self, method: Code, f: F) -> Resource
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        self.handlers.retain(|(m, _)| *m != method);
        self.handlers.push((method, handler(f)));
        self
    }

    /// Answers GET.
    pub fn get<F, Fut>(self, f: F) -> Resource
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        self.method(Code::GET, f)
    }

    /// Answers POST.
    pub fn post<F, Fut>(self, f: F) -> Resource
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        self.method(Code::POST, f)
    }

    /// Answers PUT.
    pub fn put<F, Fut>(self, f: F) -> Resource
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        self.method(Code::PUT, f)
    }

    /// Answers DELETE.
    pub fn delete<F, Fut>(self, f: F) -> Resource
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        self.method(Code::DELETE, f)
    }

    /// Answers FETCH.
    pub fn fetch<F, Fut>(self, f: F) -> Resource
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        self.method(Code::FETCH, f)
    }

    /// Answers every method without its own handler with `f`.
    pub fn any<F, Fut>(mut self, f: F) -> Resource
    where
        F: Fn(Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        self.fallback = Some(handler(f));
        self
    }

    /// Adds a resource type (`rt`).
    pub fn rt(mut self, resource_type: impl Into<String>) -> Resource {
        self.attributes.resource_types.push(resource_type.into());
        self
    }

    /// Adds an interface description (`if`).
    pub fn interface(mut self, interface: impl Into<String>) -> Resource {
        self.attributes.interfaces.push(interface.into());
        self
    }

    /// Adds a Content-Format (`ct`).
    pub fn ct(mut self, format: ContentFormat) -> Resource {
        self.attributes.content_formats.push(format.0);
        self
    }

    /// Sets the maximum size estimate (`sz`).
    pub fn sz(mut self, size: u32) -> Resource {
        self.attributes.size = Some(size);
        self
    }

    /// Marks the resource observable (`obs`).
    pub fn obs(mut self) -> Resource {
        self.attributes.observable = true;
        self
    }

    /// How [`Server::notify`](super::Server::notify) sends this resource's notifications:
    /// always CON, NON, or (the default) NON with a periodic CON (RFC 7641 §4.5).
    pub fn notifications(mut self, kind: NotificationType) -> Resource {
        self.notifications = kind;
        self
    }

    /// Sets a human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Resource {
        self.attributes.title = Some(title.into());
        self
    }

    /// Leaves the resource out of `/.well-known/core`.
    pub fn hidden(mut self) -> Resource {
        self.hidden = true;
        self
    }

    /// The link attributes.
    pub fn attributes(&self) -> &Attributes {
        &self.attributes
    }

    /// The handler for `method`, if any.
    pub(crate) fn handler_for(&self, method: Code) -> Option<&Handler> {
        self.handlers
            .iter()
            .find(|(m, _)| *m == method)
            .map(|(_, h)| h)
            .or(self.fallback.as_ref())
    }
}
