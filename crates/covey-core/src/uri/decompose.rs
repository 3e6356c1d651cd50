//! URI -> request options (RFC 7252 §6.4).

use core::net::SocketAddr;

use super::host::Host;
use super::parse::Uri;
use super::segments::{PathSegments, QueryArgs};
use super::value::OptionValue;
use crate::{EncodeError, MessageEncoder, OptionNumber};

/// The Uri-Host, Uri-Port, Uri-Path and Uri-Query options of a [`Uri`], in ascending order.
#[derive(Debug, Clone)]
pub struct UriOptions<'a> {
    host: Option<&'a str>,
    port: Option<u16>,
    path: PathSegments<'a>,
    query: QueryArgs<'a>,
}

impl<'a> Uri<'a> {
    /// The options of a request for this URI sent to `destination`: Uri-Host for registered
    /// names only, Uri-Port when the port differs from `destination`'s (or, with no
    /// destination, from the scheme default), then the path and query, percent-decoded.
    pub fn options(&self, destination: Option<SocketAddr>) -> UriOptions<'a> {
        let port = self.port_or_default();
        let implied = destination.map_or(self.scheme.default_port(), |d| d.port());
        UriOptions {
            host: match self.host {
                Host::Name(name) => Some(name),
                Host::Ip(_) => None,
            },
            port: (port != implied).then_some(port),
            path: self.path_segments(),
            query: self.query_args(),
        }
    }

    /// Writes [`Uri::options`] into a message whose other options all have higher numbers
    /// than Uri-Query (15), or come later in the encoder.
    pub fn write_options(
        &self,
        destination: Option<SocketAddr>,
        encoder: &mut MessageEncoder<'_>,
    ) -> Result<(), EncodeError> {
        for (number, value) in self.options(destination) {
            encoder.option(number, &value)?;
        }
        Ok(())
    }
}

impl Iterator for UriOptions<'_> {
    type Item = (OptionNumber, OptionValue);

    fn next(&mut self) -> Option<(OptionNumber, OptionValue)> {
        // Parsing checked every value, so decoding cannot fail; a failure would be skipped.
        if let Some(host) = self.host.take() {
            if let Some(v) = OptionValue::decode(host, true) {
                return Some((OptionNumber::URI_HOST, v));
            }
        }
        if let Some(port) = self.port.take() {
            return Some((OptionNumber::URI_PORT, OptionValue::uint(u32::from(port))));
        }
        for segment in self.path.by_ref() {
            if let Some(v) = OptionValue::decode(segment, false) {
                return Some((OptionNumber::URI_PATH, v));
            }
        }
        for arg in self.query.by_ref() {
            if let Some(v) = OptionValue::decode(arg, false) {
                return Some((OptionNumber::URI_QUERY, v));
            }
        }
        None
    }
}
