//! The `/mc` resource of a member (group-communication spec): `GET` lists the groups the node
//! joined (text, one per line, or a CBOR array of 16-byte addresses), `POST ?act=add` /
//! `?act=del` with the 16 raw bytes of an IPv6 group address joins or leaves it. An App, so
//! the same code runs under the tokio driver and on a simulated node; the host does the
//! joining. Who may list, join and leave is decided by its [`Access`]: open unless built
//! [`GroupMembershipResource::with_access`].

use crate::authorization::{Access, Action, Denial};
use covey_core::{uint, Code, ContentFormat, OptionNumber};
use covey_proto::{opt, App, AppContext, Event, GroupError, IncomingId, Received, Response};
use std::net::{IpAddr, Ipv6Addr};

/// The path of the membership resource.
pub const MC_PATH: &str = "mc";

/// How it is listed in `/.well-known/core`.
pub const MC_LINK: &str = "</mc>;rt=\"core.mc\"";

/// The `/mc` App.
#[derive(Debug, Default, Clone)]
pub struct GroupMembershipResource {
    access: Access,
}

impl GroupMembershipResource {
    /// The resource, open to anyone who reaches it.
    pub fn new() -> GroupMembershipResource {
        GroupMembershipResource::default()
    }

    /// The resource, authorizing every request through `access`.
    pub fn with_access(access: Access) -> GroupMembershipResource {
        GroupMembershipResource { access }
    }
}

impl App for GroupMembershipResource {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        let Event::Request(id) = event else { return };
        let Some(request) = cx.endpoint.request(id) else {
            return;
        };
        let method = request.message.code();
        let accept = request.message.accept();
        let act = request
            .message
            .uri_query()
            .find_map(|q| q.strip_prefix("act=").map(str::to_string));
        let payload = request.payload().to_vec();
        let who = Access::requester(cx, &request);
        let check = |action: Action| self.access.check(&who, &action);
        match method {
            Code::GET => match check(Action::Read) {
                Ok(()) => list(cx, id, accept),
                Err(denial) => answer(cx, id, denial.code, &denial.message),
            },
            Code::POST => change(cx, id, act.as_deref(), &payload, check),
            _ => answer(
                cx,
                id,
                Code::METHOD_NOT_ALLOWED,
                "use GET to list groups, POST ?act=add|del to change them",
            ),
        }
    }

    fn serves(&self, request: &Received<'_>) -> bool {
        let mut path = request.message.uri_path();
        path.next() == Some(MC_PATH) && path.next().is_none()
    }
}

fn answer(cx: &mut AppContext<'_>, id: IncomingId, code: Code, diagnostic: &str) {
    let _ = cx.endpoint.respond(
        cx.now,
        id,
        &Response::with_payload(code, diagnostic.as_bytes()),
    );
}

fn list(cx: &mut AppContext<'_>, id: IncomingId, accept: Option<ContentFormat>) {
    let groups = cx.groups();
    let (format, body) = match accept {
        Some(ContentFormat::CBOR) => {
            // A CBOR array of 16-byte strings (IPv4 groups as IPv4-mapped IPv6).
            let mut cbor = Vec::with_capacity(3 + groups.len() * 17);
            cbor_head(&mut cbor, 4, groups.len());
            for g in &groups {
                let bytes = match g {
                    IpAddr::V6(v6) => v6.octets(),
                    IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
                };
                cbor_head(&mut cbor, 2, bytes.len());
                cbor.extend_from_slice(&bytes);
            }
            (ContentFormat::CBOR, cbor)
        }
        None | Some(ContentFormat::TEXT_PLAIN) => {
            let text: String = groups.iter().map(|g| format!("{g}\n")).collect();
            (ContentFormat::TEXT_PLAIN, text.into_bytes())
        }
        Some(_) => {
            return answer(
                cx,
                id,
                Code::NOT_ACCEPTABLE,
                "/mc is text/plain or application/cbor",
            )
        }
    };
    let mut cf = [0u8; 4];
    let options = [opt(
        OptionNumber::CONTENT_FORMAT,
        uint::encode(u32::from(format.0), &mut cf),
    )];
    let response = Response {
        code: Code::CONTENT,
        options: &options,
        payload: &body,
    };
    let _ = cx.endpoint.respond(cx.now, id, &response);
}

/// `POST /mc?act=...`: the group is read first, as whether the change is allowed depends on it.
fn change(
    cx: &mut AppContext<'_>,
    id: IncomingId,
    act: Option<&str>,
    payload: &[u8],
    check: impl Fn(Action) -> Result<(), Denial>,
) {
    let Ok(octets) = <[u8; 16]>::try_from(payload) else {
        return answer(
            cx,
            id,
            Code::BAD_REQUEST,
            "payload must be the 16 bytes of an IPv6 address",
        );
    };
    let v6 = Ipv6Addr::from(octets);
    // An IPv4 group travels IPv4-mapped.
    let group = v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4);
    if !group.is_multicast() {
        let text = format!("{group} is not multicast");
        return answer(cx, id, Code::BAD_REQUEST, &text);
    }
    let action = match act {
        Some("add") => Action::Join(group),
        Some("del") => Action::Leave(group),
        _ => {
            return answer(
                cx,
                id,
                Code::BAD_REQUEST,
                "query must be act=add or act=del",
            )
        }
    };
    if let Err(denial) = check(action) {
        return answer(cx, id, denial.code, &denial.message);
    }
    // Joined or left only for a verified address (Echo, RFC 9175): a spoofed source makes
    // the node neither leave a group nor join one.
    if cx.endpoint.challenge_unverified(cx.now, id) {
        return;
    }
    let (result, done) = match action {
        Action::Join(_) => (cx.join_group(group), Code::CHANGED),
        _ => (cx.leave_group(group), Code::DELETED),
    };
    let (code, text) = match result {
        Ok(()) => (done, String::new()),
        Err(e @ GroupError::TooManyGroups) => (Code::SERVICE_UNAVAILABLE, e.to_string()),
        Err(GroupError::NotJoined) => (Code::NOT_FOUND, format!("not a member of {group}")),
        Err(e @ GroupError::NotMulticast) => (Code::BAD_REQUEST, e.to_string()),
        Err(e) => (Code::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    answer(cx, id, code, &text);
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
