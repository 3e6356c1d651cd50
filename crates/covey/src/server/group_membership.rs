//! The opt-in `/mc` resource through which the Entity Manager manages multicast members: GET
//! lists the joined groups, `POST ?act=add` / `?act=del` with a 16-byte IPv6 address joins or
//! leaves on the socket.

use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, OnceLock};

use covey_core::{Code, ContentFormat};

use super::resource::Resource;
use crate::multicast::{Membership, MulticastError};
use crate::{Request, Response};

/// The path of the membership resource.
pub const MC_PATH: &str = "/mc";

/// The resource; `membership` is filled in once the sockets are bound.
pub(crate) fn resource(membership: Arc<OnceLock<Membership>>) -> Resource {
    let for_get = membership.clone();
    Resource::new()
        .rt("core.mc")
        .get(move |request| {
            let membership = for_get.get().cloned();
            async move { list(membership, &request) }
        })
        .post(move |request| {
            let membership = membership.get().cloned();
            async move { change(membership, &request) }
        })
}

fn list(membership: Option<Membership>, request: &Request) -> Response {
    let Some(membership) = membership else {
        return Response::error(Code::SERVICE_UNAVAILABLE, "not started");
    };
    let groups: Vec<IpAddr> = membership.groups().iter().map(|g| g.address).collect();
    if request.accept() == Some(ContentFormat::CBOR) {
        // A CBOR array of 16-byte strings (IPv4 groups as IPv4-mapped IPv6).
        let mut cbor = Vec::with_capacity(1 + groups.len() * 17);
        cbor_head(&mut cbor, 4, groups.len());
        for g in &groups {
            let bytes = match g {
                IpAddr::V6(v6) => v6.octets(),
                IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
            };
            cbor_head(&mut cbor, 2, bytes.len());
            cbor.extend_from_slice(&bytes);
        }
        return Response::content(ContentFormat::CBOR, cbor);
    }
    if request
        .accept()
        .is_some_and(|a| a != ContentFormat::TEXT_PLAIN)
    {
        return Response::new(Code::NOT_ACCEPTABLE);
    }
    let text: String = groups.iter().map(|g| format!("{g}\n")).collect();
    Response::content(ContentFormat::TEXT_PLAIN, text)
}

fn change(membership: Option<Membership>, request: &Request) -> Response {
    let Some(membership) = membership else {
        return Response::error(Code::SERVICE_UNAVAILABLE, "not started");
    };
    let act = request.query("act");
    let Ok(octets) = <[u8; 16]>::try_from(request.payload.as_slice()) else {
        return Response::error(
            Code::BAD_REQUEST,
            "payload must be the 16 bytes of an IPv6 address",
        );
    };
    let group = IpAddr::V6(Ipv6Addr::from(octets));
    if !crate::socket::canonical_ip(group).is_multicast() {
        return Response::error(Code::BAD_REQUEST, format!("{group} is not multicast"));
    }
    match act.as_deref() {
        Some("add") => match membership.join(group, None) {
            Ok(_) => Response::new(Code::CHANGED),
            Err(e @ MulticastError::TooManyGroups(_)) => {
                Response::error(Code::SERVICE_UNAVAILABLE, e.to_string())
            }
            Err(e) => Response::error(Code::INTERNAL_SERVER_ERROR, e.to_string()),
        },
        Some("del") => match membership.leave(group) {
            Ok(()) => Response::new(Code::DELETED),
            Err(e @ MulticastError::NotMember(_)) => {
                Response::error(Code::NOT_FOUND, e.to_string())
            }
            Err(e) => Response::error(Code::INTERNAL_SERVER_ERROR, e.to_string()),
        },
        _ => Response::error(Code::BAD_REQUEST, "query must be act=add or act=del"),
    }
}

/// A CBOR head with major type `major` and argument `n`.
fn cbor_head(out: &mut Vec<u8>, major: u8, n: usize) {
    let m = major << 5;
    match n {
        0..=23 => out.push(m | n as u8),
        24..=0xff => out.extend([m | 24, n as u8]),
        _ => {
            let n = u16::try_from(n).unwrap_or(u16::MAX);
            out.push(m | 25);
            out.extend(n.to_be_bytes());
        }
    }
}
