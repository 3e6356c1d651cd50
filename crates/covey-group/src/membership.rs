//! Group membership management: unicast CON `POST /mc?act=add|del` to each member with the
//! 16 raw bytes of the group address, and the per-member results.

use crate::response::MemberResponse;
use crate::task_io::TaskIo;
use crate::timers::TimerKey;
use covey_core::{uint, Code, ContentFormat, OptionNumber};
use covey_proto::{opt, Duration, Failure, Request, RequestId, RequestParams};
use std::collections::BTreeMap;
use std::fmt;
use std::net::{Ipv6Addr, SocketAddr};

const TAG_DEADLINE: u8 = 4;

/// Join or leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `act=add`.
    Join,
    /// `act=del`.
    Leave,
}

impl Action {
    fn query(self) -> &'static str {
        match self {
            Action::Join => "act=add",
            Action::Leave => "act=del",
        }
    }

    fn verb(self) -> &'static str {
        match self {
            Action::Join => "joined",
            Action::Leave => "left",
        }
    }
}

/// What one member answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberResult {
    /// Done (2.04 for add, 2.02 for del).
    Done(Code),
    /// Refused with this code and diagnostic.
    Refused(Code, String),
    /// No answer.
    Failed(String),
}

impl MemberResult {
    /// True when the member did what was asked.
    pub fn is_ok(&self) -> bool {
        matches!(self, MemberResult::Done(_))
    }
}

/// One member's line of a membership report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberReport {
    /// The member URI.
    pub member: String,
    /// What it did.
    pub action: Action,
    /// Its result.
    pub result: MemberResult,
}

impl fmt::Display for MemberReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.result {
            MemberResult::Done(code) => {
                write!(f, "{} {} ({code})", self.member, self.action.verb())
            }
            MemberResult::Refused(code, diag) if diag.is_empty() => {
                write!(f, "{} refused: {code}", self.member)
            }
            MemberResult::Refused(code, diag) => {
                write!(f, "{} refused: {code} {diag}", self.member)
            }
            MemberResult::Failed(why) => write!(f, "{} did not answer: {why}", self.member),
        }
    }
}

/// Asking a set of members to join or leave one group.
#[derive(Debug)]
pub struct MembershipChange {
    action: Action,
    group: Ipv6Addr,
    path: String,
    members: Vec<(String, SocketAddr)>,
    results: Vec<Option<MemberResult>>,
    /// Requests outstanding, cancelled in request order at the deadline.
    pending: BTreeMap<RequestId, usize>,
    timeout: Duration,
    timer: Option<TimerKey>,
}

impl MembershipChange {
    /// A change for `members` (URI, address), via the resource at `path` (e.g. `mc`).
    pub fn new(
        action: Action,
        group: Ipv6Addr,
        path: &str,
        members: Vec<(String, SocketAddr)>,
        timeout: Duration,
    ) -> MembershipChange {
        let n = members.len();
        MembershipChange {
            action,
            group,
            path: path.trim_matches('/').to_string(),
            members,
            results: vec![None; n],
            pending: BTreeMap::new(),
            timeout,
            timer: None,
        }
    }

    /// Sends every request.
    pub fn start(&mut self, io: &mut TaskIo<'_>) {
        let octets = self.group.octets();
        let mut cf = [0u8; 4];
        let cf = uint::encode(u32::from(ContentFormat::OCTET_STREAM.0), &mut cf);
        for i in 0..self.members.len() {
            let mut options: Vec<_> = self
                .path
                .split('/')
                .map(|s| opt(OptionNumber::URI_PATH, s.as_bytes()))
                .collect();
            options.push(opt(OptionNumber::CONTENT_FORMAT, cf));
            options.push(opt(OptionNumber::URI_QUERY, self.action.query().as_bytes()));
            let request = Request {
                method: Code::POST,
                options: &options,
                payload: &octets,
            };
            // Members of a multicast entity are coap:// (DTLS has no multicast).
            match io.send(self.members[i].1, false, &request, RequestParams::default()) {
                Ok(id) => {
                    self.pending.insert(id, i);
                }
                Err(e) => self.results[i] = Some(MemberResult::Failed(format!("not sent: {e}"))),
            }
        }
        if !self.pending.is_empty() {
            self.timer = Some(io.set_timer(io.now + self.timeout, TAG_DEADLINE));
        }
    }

    /// A member answered.
    pub fn on_response(&mut self, io: &mut TaskIo<'_>, id: RequestId, response: MemberResponse) {
        if let Some(i) = self.pending.remove(&id) {
            self.results[i] = Some(if response.code.is_success() {
                MemberResult::Done(response.code)
            } else {
                MemberResult::Refused(response.code, response.diagnostic())
            });
        }
        self.cleanup(io);
    }

    /// A request failed.
    pub fn on_failed(&mut self, io: &mut TaskIo<'_>, id: RequestId, failure: Failure) {
        if let Some(i) = self.pending.remove(&id) {
            self.results[i] = Some(MemberResult::Failed(failure.to_string()));
        }
        self.cleanup(io);
    }

    /// The deadline passed: every member still silent failed.
    pub fn on_timer(&mut self, io: &mut TaskIo<'_>, tag: u8) {
        if tag != TAG_DEADLINE {
            return;
        }
        self.timer = None;
        for (id, i) in std::mem::take(&mut self.pending) {
            io.cancel(id);
            self.results[i] = Some(MemberResult::Failed(format!(
                "no answer within {} s",
                self.timeout.as_secs_f64()
            )));
        }
    }

    fn cleanup(&mut self, io: &mut TaskIo<'_>) {
        if self.pending.is_empty() {
            if let Some(t) = self.timer.take() {
                io.cancel_timer(t);
            }
        }
    }

    /// True once every member answered or failed.
    pub fn is_done(&self) -> bool {
        self.pending.is_empty()
    }

    /// Each member's result, in order.
    pub fn report(&self) -> Vec<MemberReport> {
        self.members
            .iter()
            .zip(&self.results)
            .map(|((uri, _), r)| MemberReport {
                member: uri.clone(),
                action: self.action,
                result: r
                    .clone()
                    .unwrap_or_else(|| MemberResult::Failed("not asked".into())),
            })
            .collect()
    }

    /// True when every member did what was asked.
    pub fn all_ok(&self) -> bool {
        self.results
            .iter()
            .all(|r| r.as_ref().is_some_and(MemberResult::is_ok))
    }

    /// The members (URI, address) that did what was asked.
    pub fn succeeded(&self) -> Vec<(String, SocketAddr)> {
        self.members
            .iter()
            .zip(&self.results)
            .filter(|(_, r)| r.as_ref().is_some_and(MemberResult::is_ok))
            .map(|(m, _)| m.clone())
            .collect()
    }
}
