//! Request options -> URI (RFC 7252 §6.5), written straight into a [`fmt::Write`].

use core::fmt;
use core::net::SocketAddr;

use super::authority::write_socket_authority;
use super::error::ComposeError;
use super::percent::{write_encoded, EncodeSet};
use super::{Scheme, MAX_VALUE_LEN};
use crate::{CoapOption, OptionNumber};

/// `value` as text if it is UTF-8 and `min..=255` bytes long.
fn text(value: &[u8], min: usize) -> Option<&str> {
    if (min..=MAX_VALUE_LEN).contains(&value.len()) {
        core::str::from_utf8(value).ok()
    } else {
        None
    }
}

/// Writes "scheme://host[:port]": Uri-Host if given, else the destination's IP literal.
fn write_authority<W: fmt::Write + ?Sized>(
    out: &mut W,
    scheme: Scheme,
    host: Option<&str>,
    port: Option<u16>,
    destination: SocketAddr,
) -> fmt::Result {
    out.write_str(scheme.as_str())?;
    out.write_str("://")?;
    match host {
        Some(host) => {
            write_encoded(out, host.bytes(), EncodeSet::Host)?;
            let port = port.unwrap_or(destination.port());
            if port != scheme.default_port() {
                write!(out, ":{port}")?;
            }
            Ok(())
        }
        None => write_socket_authority(out, scheme, destination, port),
    }
}

/// Writes the URI of a request with `options` sent to `destination` under `scheme`. Options
/// other than Uri-Host, Uri-Port, Uri-Path and Uri-Query are ignored; those four must come in
/// ascending order, as a message holds them.
pub fn compose<'o, W: fmt::Write + ?Sized>(
    options: impl IntoIterator<Item = CoapOption<'o>>,
    destination: SocketAddr,
    scheme: Scheme,
    out: &mut W,
) -> Result<(), ComposeError> {
    let mut host = None;
    let mut port = None;
    let mut last: Option<OptionNumber> = None;
    let mut authority_written = false;
    let mut path_written = false;
    let mut first_arg = true;
    for option in options {
        let number = option.number;
        if !matches!(
            number,
            OptionNumber::URI_HOST
                | OptionNumber::URI_PORT
                | OptionNumber::URI_PATH
                | OptionNumber::URI_QUERY
        ) {
            continue;
        }
        match last {
            Some(prev) if number < prev => return Err(ComposeError::OutOfOrder(number)),
            Some(prev)
                if number == prev
                    && matches!(number, OptionNumber::URI_HOST | OptionNumber::URI_PORT) =>
            {
                return Err(ComposeError::Repeated(number))
            }
            _ => last = Some(number),
        }
        match number {
            OptionNumber::URI_HOST => {
                host = Some(text(option.value, 1).ok_or(ComposeError::InvalidHost)?);
            }
            OptionNumber::URI_PORT => {
                let value = option.value_uint().filter(|_| option.value.len() <= 2);
                port = Some(
                    value
                        .and_then(|v| u16::try_from(v).ok())
                        .ok_or(ComposeError::InvalidPort)?,
                );
            }
            _ => {
                let value = text(option.value, 0).ok_or(ComposeError::InvalidValue(number))?;
                if !authority_written {
                    write_authority(out, scheme, host, port, destination)?;
                    authority_written = true;
                }
                if number == OptionNumber::URI_PATH {
                    out.write_char('/')?;
                    write_encoded(out, value.bytes(), EncodeSet::PathSegment)?;
                } else {
                    if !path_written {
                        out.write_char('/')?;
                    }
                    out.write_char(if first_arg { '?' } else { '&' })?;
                    write_encoded(out, value.bytes(), EncodeSet::QueryArg)?;
                    first_arg = false;
                }
                path_written = true;
            }
        }
    }
    if !authority_written {
        write_authority(out, scheme, host, port, destination)?;
    }
    if !path_written {
        out.write_char('/')?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::String;

    fn opt(number: OptionNumber, value: &[u8]) -> CoapOption<'_> {
        CoapOption { number, value }
    }

    fn composed(options: &[CoapOption<'_>], destination: &str) -> Result<String, ComposeError> {
        let mut s = String::new();
        compose(
            options.iter().copied(),
            destination.parse().unwrap(),
            Scheme::Coap,
            &mut s,
        )
        .map(|()| s)
    }

    #[test]
    fn u5_well_known_core() {
        let options = [
            opt(OptionNumber::URI_HOST, b"example.net"),
            opt(OptionNumber::URI_PATH, b".well-known"),
            opt(OptionNumber::URI_PATH, b"core"),
        ];
        assert_eq!(
            composed(&options, "192.0.2.1:5683").unwrap(),
            "coap://example.net/.well-known/core"
        );
    }

    #[test]
    fn destination_literal_and_port() {
        assert_eq!(
            composed(&[], "192.0.2.1:5683").unwrap(),
            "coap://192.0.2.1/"
        );
        assert_eq!(
            composed(&[], "[2001:db8::1]:61616").unwrap(),
            "coap://[2001:db8::1]:61616/"
        );
        assert_eq!(
            composed(&[], "[fe80::1%3]:5683").unwrap(),
            "coap://[fe80::1%253]/"
        );
        let port = [opt(OptionNumber::URI_PORT, &[0x16, 0x33])];
        assert_eq!(composed(&port, "192.0.2.1:1").unwrap(), "coap://192.0.2.1/");
        let port = [opt(OptionNumber::URI_PORT, &[0x16, 0x34])];
        assert_eq!(
            composed(&port, "192.0.2.1:5683").unwrap(),
            "coap://192.0.2.1:5684/"
        );
        let mut s = String::new();
        compose([], "192.0.2.1:5684".parse().unwrap(), Scheme::Coaps, &mut s).unwrap();
        assert_eq!(s, "coaps://192.0.2.1/");
    }

    #[test]
    fn encodes_path_and_query() {
        let options = [
            opt(OptionNumber::URI_HOST, b"Ex.Org"),
            opt(OptionNumber::CONTENT_FORMAT, &[]),
            opt(OptionNumber::URI_PATH, b""),
            opt(OptionNumber::URI_PATH, b"/"),
            opt(OptionNumber::URI_PATH, b"."),
            opt(OptionNumber::URI_PATH, "é?".as_bytes()),
            opt(OptionNumber::URI_QUERY, b"//"),
            opt(OptionNumber::URI_QUERY, b"?&"),
            opt(OptionNumber::ACCEPT, &[]),
        ];
        assert_eq!(
            composed(&options, "192.0.2.1:5683").unwrap(),
            "coap://ex.org//%2F/%2E/%C3%A9%3F?//&?%26"
        );
        let query_only = [opt(OptionNumber::URI_QUERY, b"a b")];
        assert_eq!(
            composed(&query_only, "192.0.2.1:5683").unwrap(),
            "coap://192.0.2.1/?a%20b"
        );
    }

    #[test]
    fn rejects_bad_options() {
        let d = "192.0.2.1:5683";
        let e = |o: &[CoapOption<'_>]| composed(o, d).unwrap_err();
        assert_eq!(
            e(&[opt(OptionNumber::URI_HOST, b"")]),
            ComposeError::InvalidHost
        );
        assert_eq!(
            e(&[opt(OptionNumber::URI_HOST, &[0xFF])]),
            ComposeError::InvalidHost
        );
        assert_eq!(
            e(&[opt(OptionNumber::URI_PORT, &[1, 0, 0])]),
            ComposeError::InvalidPort
        );
        let long = [b'a'; 256];
        assert_eq!(
            e(&[opt(OptionNumber::URI_PATH, &long)]),
            ComposeError::InvalidValue(OptionNumber::URI_PATH)
        );
        assert_eq!(
            e(&[
                opt(OptionNumber::URI_PATH, b"a"),
                opt(OptionNumber::URI_HOST, b"h")
            ]),
            ComposeError::OutOfOrder(OptionNumber::URI_HOST)
        );
        assert_eq!(
            e(&[
                opt(OptionNumber::URI_HOST, b"a"),
                opt(OptionNumber::URI_HOST, b"b")
            ]),
            ComposeError::Repeated(OptionNumber::URI_HOST)
        );
    }

    #[test]
    fn reports_a_full_writer() {
        struct Tiny(usize);
        impl fmt::Write for Tiny {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.0 = self.0.checked_sub(s.len()).ok_or(fmt::Error)?;
                Ok(())
            }
        }
        let r = compose(
            [],
            "192.0.2.1:5683".parse().unwrap(),
            Scheme::Coap,
            &mut Tiny(8),
        );
        assert_eq!(r, Err(ComposeError::Write));
    }
}
