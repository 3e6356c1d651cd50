//! The state machine of one fan-out: requests to the members (unicast, paced by the inserted
//! delay, or one NON to the group address) and the collection of their replies until `enr`
//! replies, the last member, the deadline, or the end of the multicast window.

use crate::response::MemberResponse;
use crate::task_io::TaskIo;
use crate::timers::TimerKey;
use covey_core::{uint, CoapOption, Code, ContentFormat, OptionNumber};
use covey_proto::{
    opt, Duration, Failure, Instant, Request, RequestError, RequestId, RequestParams,
};
use std::collections::BTreeMap;
use std::net::SocketAddr;

const TAG_SEND: u8 = 1;
const TAG_EXPIRE: u8 = 2;
const TAG_WINDOW: u8 = 3;

/// One member to ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Its URI (for reports).
    pub uri: String,
    /// Its address (requests go there; multicast replies are matched by it).
    pub addr: SocketAddr,
    /// Options of the request to it: Uri-Path, Uri-Query, Accept, Hop-Limit ...
    pub options: Vec<(OptionNumber, Vec<u8>)>,
    /// An entity of this EM, asked in-process rather than over the network.
    pub local: bool,
    /// A `coaps://` member, asked over DTLS.
    pub secure: bool,
}

/// How the members are reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// One request per member, `delay` apart.
    Unicast {
        /// Delay between successive requests.
        delay: Duration,
    },
    /// One NON request to a group.
    Multicast {
        /// Group address and port.
        destination: SocketAddr,
        /// Options of the group request.
        options: Vec<(OptionNumber, Vec<u8>)>,
        /// How long replies are collected.
        window: Duration,
    },
}

/// What to send and when to stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FanoutSpec {
    /// The method.
    pub method: Code,
    /// The payload (fan-out of PUT/POST).
    pub payload: Vec<u8>,
    /// Its Content-Format.
    pub content_format: Option<ContentFormat>,
    /// CON (unicast only) or NON.
    pub confirmable: bool,
    /// Stop once this many members answered successfully.
    pub enr: usize,
    /// A member that has not answered this long after its request counts as missing.
    pub member_timeout: Duration,
    /// Most member requests outstanding at once.
    pub max_in_flight: usize,
    /// Unicast or multicast.
    pub mode: Mode,
}

/// What became of one member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Not asked (yet, or at all once `enr` replies arrived).
    Unasked,
    /// Asked, no answer yet (or none before the end).
    Waiting,
    /// It answered.
    Answered {
        /// The response.
        response: MemberResponse,
        /// When, from the start of the fan-out.
        after: Duration,
    },
    /// The request failed (timeout, reset, overload).
    Failed(String),
}

/// One fan-out in progress.
#[derive(Debug)]
pub struct Fanout {
    spec: FanoutSpec,
    targets: Vec<Target>,
    outcomes: Vec<Outcome>,
    started: Instant,
    /// Next member to ask (unicast).
    next: usize,
    /// When the next member may be asked.
    next_due: Instant,
    /// Member requests outstanding, ordered so expiry and cancellation go in request order.
    in_flight: BTreeMap<RequestId, (usize, Instant)>,
    /// Local targets asked and not answered yet, with the time they were asked.
    local_in_flight: BTreeMap<usize, Instant>,
    /// Local targets to ask, for the EM to pick up.
    local_requests: Vec<usize>,
    send_timer: Option<TimerKey>,
    expiry_timer: Option<TimerKey>,
    window_timer: Option<TimerKey>,
    group_request: Option<RequestId>,
    successes: usize,
    strangers: usize,
    done: bool,
}

/// The end of a fan-out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FanoutResult {
    /// Per member, in target order.
    pub outcomes: Vec<Outcome>,
    /// Members that answered successfully.
    pub successes: usize,
    /// When it started.
    pub started: Instant,
    /// How long it took.
    pub elapsed: Duration,
    /// Replies from addresses that are not members (multicast).
    pub strangers: usize,
}

impl Fanout {
    /// A fan-out to `targets`, not started yet.
    pub fn new(spec: FanoutSpec, targets: Vec<Target>, now: Instant) -> Fanout {
        let n = targets.len();
        Fanout {
            spec,
            targets,
            outcomes: vec![Outcome::Unasked; n],
            started: now,
            next: 0,
            next_due: now,
            in_flight: BTreeMap::new(),
            local_in_flight: BTreeMap::new(),
            local_requests: Vec::new(),
            send_timer: None,
            expiry_timer: None,
            window_timer: None,
            group_request: None,
            successes: 0,
            strangers: 0,
            done: n == 0,
        }
    }

    /// True once the fan-out has nothing more to wait for.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Sends the first request(s).
    pub fn start(&mut self, io: &mut TaskIo<'_>) {
        self.started = io.now;
        self.next_due = io.now;
        match self.spec.mode.clone() {
            Mode::Unicast { .. } => self.pump(io),
            Mode::Multicast {
                destination,
                options,
                window,
            } => match self.send(io, (destination, false), &options, false) {
                Ok(id) => {
                    self.group_request = Some(id);
                    for o in &mut self.outcomes {
                        *o = Outcome::Waiting;
                    }
                    self.window_timer = Some(io.set_timer(io.now + window, TAG_WINDOW));
                }
                Err(e) => {
                    for o in &mut self.outcomes {
                        *o = Outcome::Failed(format!("multicast request not sent: {e}"));
                    }
                    self.done = true;
                }
            },
        }
        self.check_done();
    }

    fn send(
        &mut self,
        io: &mut TaskIo<'_>,
        (remote, secure): (SocketAddr, bool),
        options: &[(OptionNumber, Vec<u8>)],
        confirmable: bool,
    ) -> Result<RequestId, RequestError> {
        let mut cf = [0u8; 4];
        let mut list: Vec<CoapOption<'_>> = options.iter().map(|(n, v)| opt(*n, v)).collect();
        if let Some(c) = self.spec.content_format {
            list.push(opt(
                OptionNumber::CONTENT_FORMAT,
                uint::encode(u32::from(c.0), &mut cf),
            ));
        }
        let request = Request {
            method: self.spec.method,
            options: &list,
            payload: &self.spec.payload,
        };
        io.send(
            remote,
            secure,
            &request,
            RequestParams {
                confirmable,
                ..RequestParams::default()
            },
        )
    }

    /// Asks the next members while the delay and the in-flight limit allow.
    fn pump(&mut self, io: &mut TaskIo<'_>) {
        let Mode::Unicast { delay } = self.spec.mode else {
            return;
        };
        while !self.done
            && self.next < self.targets.len()
            && self.in_flight.len() + self.local_in_flight.len() < self.spec.max_in_flight.max(1)
        {
            if io.now < self.next_due {
                if self.send_timer.is_none() {
                    self.send_timer = Some(io.set_timer(self.next_due, TAG_SEND));
                }
                return;
            }
            let i = self.next;
            self.next += 1;
            let target = self.targets[i].clone();
            if target.local {
                self.local_in_flight.insert(i, io.now);
                self.local_requests.push(i);
                self.outcomes[i] = Outcome::Waiting;
            } else {
                match self.send(
                    io,
                    (target.addr, target.secure),
                    &target.options,
                    self.spec.confirmable,
                ) {
                    Ok(id) => {
                        self.in_flight.insert(id, (i, io.now));
                        self.outcomes[i] = Outcome::Waiting;
                    }
                    Err(e) => self.outcomes[i] = Outcome::Failed(format!("not sent: {e}")),
                }
            }
            if self.expiry_timer.is_none() && matches!(self.outcomes[i], Outcome::Waiting) {
                self.expiry_timer =
                    Some(io.set_timer(io.now + self.spec.member_timeout, TAG_EXPIRE));
            }
            self.next_due = io.now + delay;
        }
    }

    /// A response arrived for request `id`.
    pub fn on_response(&mut self, io: &mut TaskIo<'_>, id: RequestId, response: MemberResponse) {
        let after = io.now - self.started;
        if Some(id) == self.group_request {
            let Some(i) = self
                .targets
                .iter()
                .position(|t| t.addr.ip().to_canonical() == response.source.ip().to_canonical())
            else {
                self.strangers += 1;
                return;
            };
            if matches!(self.outcomes[i], Outcome::Answered { .. }) {
                return; // a duplicate
            }
            self.record(i, response, after);
        } else if let Some((i, _)) = self.in_flight.remove(&id) {
            self.record(i, response, after);
            self.pump(io);
        }
        self.check_done();
    }

    /// Local targets the EM must now ask (each once).
    pub fn take_local_requests(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.local_requests)
    }

    /// The answer of local target `i` (one of this EM's entities).
    pub fn on_local_response(&mut self, io: &mut TaskIo<'_>, i: usize, response: MemberResponse) {
        if self.local_in_flight.remove(&i).is_some() {
            let after = io.now - self.started;
            self.record(i, response, after);
            self.pump(io);
        }
        self.check_done();
    }

    fn record(&mut self, i: usize, response: MemberResponse, after: Duration) {
        if response.code.is_success() {
            self.successes += 1;
        }
        self.outcomes[i] = Outcome::Answered { response, after };
    }

    /// Request `id` failed.
    pub fn on_failed(&mut self, io: &mut TaskIo<'_>, id: RequestId, failure: Failure) {
        if Some(id) == self.group_request {
            self.group_request = None;
            self.done = true;
            return;
        }
        if let Some((i, _)) = self.in_flight.remove(&id) {
            self.outcomes[i] = Outcome::Failed(failure.to_string());
            self.pump(io);
        }
        self.check_done();
    }

    /// The multicast request's window closed in the engine.
    pub fn on_finished(&mut self, id: RequestId) {
        if Some(id) == self.group_request {
            self.group_request = None;
            self.done = true;
        }
    }

    /// A timer of this fan-out fired.
    pub fn on_timer(&mut self, io: &mut TaskIo<'_>, tag: u8) {
        match tag {
            TAG_SEND => {
                self.send_timer = None;
                self.pump(io);
            }
            TAG_EXPIRE => {
                self.expiry_timer = None;
                let limit = self.spec.member_timeout;
                let expired: Vec<RequestId> = self
                    .in_flight
                    .iter()
                    .filter(|(_, (_, sent))| io.now - *sent >= limit)
                    .map(|(id, _)| *id)
                    .collect();
                let silent = format!("no answer within {} s", limit.as_secs_f64());
                for id in expired {
                    if let Some((i, _)) = self.in_flight.remove(&id) {
                        io.cancel(id);
                        self.outcomes[i] = Outcome::Failed(silent.clone());
                    }
                }
                let now = io.now;
                self.local_in_flight.retain(|i, sent| {
                    let keep = now - *sent < limit;
                    if !keep {
                        self.outcomes[*i] = Outcome::Failed(silent.clone());
                    }
                    keep
                });
                let oldest = self
                    .in_flight
                    .values()
                    .map(|(_, sent)| *sent)
                    .chain(self.local_in_flight.values().copied())
                    .min();
                if let Some(oldest) = oldest {
                    self.expiry_timer = Some(io.set_timer(oldest + limit, TAG_EXPIRE));
                }
                self.pump(io);
            }
            TAG_WINDOW => {
                self.window_timer = None;
                self.done = true;
            }
            _ => {}
        }
        self.check_done();
    }

    fn check_done(&mut self) {
        let everyone = self.next >= self.targets.len()
            && self.in_flight.is_empty()
            && self.local_in_flight.is_empty();
        let unicast = matches!(self.spec.mode, Mode::Unicast { .. });
        let all_answered = !unicast
            && self
                .outcomes
                .iter()
                .all(|o| matches!(o, Outcome::Answered { .. }));
        if self.successes >= self.spec.enr.max(1) || (unicast && everyone) || all_answered {
            self.done = true;
        }
    }

    /// Ends the fan-out: outstanding requests and timers are cancelled.
    pub fn finish(mut self, io: &mut TaskIo<'_>) -> FanoutResult {
        for (id, _) in std::mem::take(&mut self.in_flight) {
            io.cancel(id);
        }
        if let Some(id) = self.group_request.take() {
            io.cancel(id);
        }
        for t in [self.send_timer, self.expiry_timer, self.window_timer]
            .into_iter()
            .flatten()
        {
            io.cancel_timer(t);
        }
        FanoutResult {
            outcomes: self.outcomes,
            successes: self.successes,
            started: self.started,
            elapsed: io.now - self.started,
            strangers: self.strangers,
        }
    }
}
