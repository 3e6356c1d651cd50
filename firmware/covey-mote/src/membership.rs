//! `/mc`: the multicast groups the mote joined, one per line; `POST ?act=add` or `?act=del`
//! with the 16 bytes of an IPv6 group joins or leaves it, as the Entity Manager manages a
//! multicast entity's members (the same resource as covey-group's, for a mote). The groups
//! themselves are kept by [`crate::groups`].

use core::net::{IpAddr, Ipv6Addr};
use covey_core::{Code, ContentFormat};
use covey_proto::{AppContext, GroupError, IncomingId, Response};

use crate::resources::{error, reply};
use crate::text::Text;

/// Answers request `id` to `/mc` with method `code`. Not inlined: its text would otherwise
/// add to the frame every request is served from, and so to the stack's peak.
#[inline(never)]
pub fn serve(cx: &mut AppContext<'_>, id: IncomingId, code: Code) {
    match code {
        Code::GET => {
            let mut text = Text::<160>::new();
            for group in cx.groups() {
                if let IpAddr::V6(group) = group {
                    let _ = write_address(&mut text, &group);
                }
            }
            reply(cx, id, None, ContentFormat::TEXT_PLAIN, text.bytes());
        }
        Code::POST => change_membership(cx, id),
        _ => error(cx, id, Code::METHOD_NOT_ALLOWED, b""),
    }
}

/// `POST /mc?act=add|del` with a group's 16 bytes: joins or leaves it, for an address that
/// showed it receives there (Echo, RFC 9175), so a spoofed request changes nothing.
fn change_membership(cx: &mut AppContext<'_>, id: IncomingId) {
    let Some(request) = cx.endpoint.request(id) else {
        return;
    };
    let join = match request.message.uri_query().next() {
        Some("act=add") => Some(true),
        Some("act=del") => Some(false),
        _ => None,
    };
    let octets = <[u8; 16]>::try_from(request.payload()).ok();
    let Some(join) = join else {
        return error(
            cx,
            id,
            Code::BAD_REQUEST,
            b"query must be act=add or act=del",
        );
    };
    let Some(octets) = octets else {
        return error(
            cx,
            id,
            Code::BAD_REQUEST,
            b"payload must be an IPv6 address's 16 bytes",
        );
    };
    let group = IpAddr::V6(Ipv6Addr::from(octets));
    if !group.is_multicast() {
        return error(cx, id, Code::BAD_REQUEST, b"not a multicast address");
    }
    if cx.endpoint.challenge_unverified(cx.now, id) {
        return;
    }
    let (result, done) = match join {
        true => (cx.join_group(group), Code::CHANGED),
        false => (cx.leave_group(group), Code::DELETED),
    };
    match result {
        Ok(()) => {
            let _ = cx.endpoint.respond(cx.now, id, &Response::new(done));
        }
        Err(GroupError::TooManyGroups) => {
            error(cx, id, Code::SERVICE_UNAVAILABLE, b"too many groups joined")
        }
        Err(GroupError::NotJoined) => error(cx, id, Code::NOT_FOUND, b"not a member"),
        Err(_) => error(cx, id, Code::BAD_REQUEST, b"cannot join that group"),
    }
}

/// `group` as eight hexadecimal groups and a newline (`ff05:0:0:0:0:0:0:fd`): valid IPv6 text
/// without the `::` shortening, whose formatting code would cost the mote kilobytes.
fn write_address<const N: usize>(text: &mut Text<N>, group: &Ipv6Addr) -> bool {
    for (i, segment) in group.segments().into_iter().enumerate() {
        if (i > 0 && !text.push(b":")) || !text.hex(segment) {
            return false;
        }
    }
    text.push(b"\n")
}
