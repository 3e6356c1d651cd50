//! Building a request: method, URI, options, payload, message type, token and timeout.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::time::Duration;

use covey_core::{Code, ContentFormat, OptionNumber, Token};

use super::{Client, ResponseStream, Target};
use crate::{Error, Options, Response};

/// A request being built; `.await` (or [`send`](RequestBuilder::send)) sends it. Built with
/// `Client::get(uri)` and friends it runs on a client of its own; with
/// [`Client::request`] (or [`client`](RequestBuilder::client)) on that client.
#[derive(Debug, Clone)]
#[must_use = "a request does nothing until it is sent or awaited"]
pub struct RequestBuilder {
    pub(crate) client: Option<Client>,
    pub(crate) uri: String,
    pub(crate) method: Code,
    pub(crate) options: Options,
    pub(crate) payload: Vec<u8>,
    pub(crate) confirmable: bool,
    pub(crate) token: Option<Vec<u8>>,
    pub(crate) timeout: Option<Duration>,
    /// The destination, when the caller resolved the URI already.
    pub(crate) resolved: Option<Target>,
    /// The OSCORE context to protect it with, by its place among the client's.
    pub(crate) oscore: Option<usize>,
    /// EDHOC message_3 for the request to carry (RFC 9668).
    pub(crate) edhoc_message_3: Option<Vec<u8>>,
}

impl RequestBuilder {
    pub(crate) fn new(client: Option<Client>, method: Code, uri: impl Into<String>) -> Self {
        RequestBuilder {
            client,
            uri: uri.into(),
            method,
            options: Options::new(),
            payload: Vec::new(),
            confirmable: true,
            token: None,
            timeout: None,
            resolved: None,
            oscore: None,
            edhoc_message_3: None,
        }
    }

    /// Protects the request with the client's `context`-th OSCORE context (0 for the first
    /// given to [`ClientBuilder::oscore_context`](crate::ClientBuilder::oscore_context)); its
    /// responses (each block, each notification) are verified before they are returned.
    /// Not for multicast, which would need Group OSCORE.
    pub fn oscore(mut self, context: usize) -> Self {
        self.oscore = Some(context);
        self
    }

    /// Makes the request, protected with [`oscore`](Self::oscore)'s context, an EDHOC +
    /// OSCORE request (RFC 9668 §3.2): it carries the EDHOC option and `message_3`, which
    /// completes at the server the handshake that context came from, saving a round trip.
    pub fn edhoc_message_3(mut self, message_3: Vec<u8>) -> Self {
        self.edhoc_message_3 = Some(message_3);
        self
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Changes the method.
    pub fn method(mut self, method: Code) -> Self {
        self.method = method;
        self
    }

    /// Adds an option (Uri-* options come from the URI; these follow them).
    pub fn option(mut self, number: OptionNumber, value: impl Into<Vec<u8>>) -> Self {
        self.options.push(number, value);
        self
    }

    /// Adds an option holding an unsigned integer.
    pub fn uint_option(mut self, number: OptionNumber, value: u32) -> Self {
        self.options.push_uint(number, value);
        self
    }

    /// Sets the payload.
    pub fn payload(mut self, payload: impl Into<Vec<u8>>) -> Self {
        self.payload = payload.into();
        self
    }

    /// Confirmable (the default) or non-confirmable.
    pub fn confirmable(mut self, confirmable: bool) -> Self {
        self.confirmable = confirmable;
        self
    }

    /// Sends as a non-confirmable message.
    pub fn non(self) -> Self {
        self.confirmable(false)
    }

    /// Sets the Accept option.
    pub fn accept(mut self, format: ContentFormat) -> Self {
        self.options
            .set_uint(OptionNumber::ACCEPT, u32::from(format.0));
        self
    }

    /// Sets the Content-Format of the payload.
    pub fn content_format(mut self, format: ContentFormat) -> Self {
        self.options
            .set_uint(OptionNumber::CONTENT_FORMAT, u32::from(format.0));
        self
    }

    /// Adds an ETag (for validation requests).
    pub fn etag(self, etag: impl Into<Vec<u8>>) -> Self {
        self.option(OptionNumber::ETAG, etag)
    }

    /// Adds an If-Match condition (an empty value matches any representation).
    pub fn if_match(self, etag: impl Into<Vec<u8>>) -> Self {
        self.option(OptionNumber::IF_MATCH, etag)
    }

    /// Adds If-None-Match: only if the resource does not exist.
    pub fn if_none_match(mut self) -> Self {
        self.options.set(OptionNumber::IF_NONE_MATCH, Vec::new());
        self
    }

    /// Adds a query argument (`name=value` or `name`) after those of the URI.
    pub fn query(self, argument: impl Into<String>) -> Self {
        self.option(OptionNumber::URI_QUERY, argument.into().into_bytes())
    }

    /// Uses this token instead of a random one (at most 8 bytes).
    pub fn token(mut self, token: impl Into<Vec<u8>>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Gives up after `timeout` (the engine's own limits apply too).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sends to `target`, which [`resolve`](crate::client::resolve) made of this request's
    /// URI, instead of resolving the URI again: what was checked is what is contacted.
    pub fn resolved(mut self, target: Target) -> Self {
        self.resolved = Some(target);
        self
    }

    /// Sends on `client` instead of a client of its own.
    pub fn client(mut self, client: &Client) -> Self {
        self.client = Some(client.clone());
        self
    }

    /// The token as the engine takes it.
    pub(crate) fn parsed_token(&self) -> Result<Option<Token>, Error> {
        match &self.token {
            None => Ok(None),
            Some(bytes) => Token::new(bytes)
                .map(Some)
                .ok_or_else(|| Error::InvalidRequest("a token is at most 8 bytes".into())),
        }
    }

    /// Sends the request and streams every response: the answers to a multicast request
    /// (each with its source) until the window closes, or all notifications of an
    /// observation (see [`observe`](RequestBuilder::observe)).
    pub async fn stream(self) -> Result<ResponseStream, Error> {
        let client = match &self.client {
            Some(client) => client.clone(),
            None => Client::new()?,
        };
        client.stream(self).await
    }

    /// Registers as an observer (Observe 0, RFC 7641) and streams the notifications.
    pub async fn observe(mut self) -> Result<ResponseStream, Error> {
        self.options.set_uint(OptionNumber::OBSERVE, 0);
        self.stream().await
    }

    /// Sends the request and waits for its response.
    pub async fn send(self) -> Result<Response, Error> {
        let client = match &self.client {
            Some(client) => client.clone(),
            None => Client::new()?,
        };
        client.execute(self).await
    }
}

impl IntoFuture for RequestBuilder {
    type Output = Result<Response, Error>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<Response, Error>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}
