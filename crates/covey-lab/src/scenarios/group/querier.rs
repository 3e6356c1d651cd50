//! The experiment's client, on a host wired to the gateways: it creates the entities through
//! `POST /e` exactly as any CoAP client would (retrying a creation the EM refused, e.g. when a
//! member did not answer its validation request in time), then queries the entity a fixed
//! number of times, one query at a time with a pause between them, and records when each
//! combined reply came and how many members it says answered.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;

use covey_core::{uint, CoapOption, Code, ContentFormat, OptionNumber};
use covey_proto::{opt, App, AppContext, Duration, Event, Instant, Request, RequestParams};

/// Timer value: send the next request (creation or query).
const NEXT: u64 = 1;

/// Pause before asking the EM again after it refused a creation.
const CREATION_RETRY: Duration = Duration::from_secs(5);

/// Creations the client tries per entity before giving up on the run.
const CREATION_ATTEMPTS: u32 = 5;

/// One entity to create.
#[derive(Debug, Clone)]
pub struct Creation {
    /// The EM that holds it.
    pub em: SocketAddr,
    /// The JSON profile posted to `/e`.
    pub profile: String,
}

/// What the client does.
#[derive(Debug, Clone)]
pub struct QueryPlan {
    /// Entities to create, in order (inner ones before those nesting them).
    pub creations: Vec<Creation>,
    /// The EM queried.
    pub em: SocketAddr,
    /// Path segments of the queried entity, e.g. `["e", "room"]`.
    pub path: Vec<String>,
    /// Uri-Query options of every query, e.g. `["eo=avg"]`.
    pub query: Vec<String>,
    /// Queries to make.
    pub queries: u32,
    /// Pause between a reply and the next query.
    pub gap: Duration,
}

/// One query's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryOutcome {
    /// When the query left the client.
    pub sent: Instant,
    /// From the query to the combined reply; `None` when the client got no reply.
    pub response_time: Option<Duration>,
    /// Members the combined reply says answered.
    pub answered: usize,
    /// Members the combined reply names (answered plus missing).
    pub members: usize,
    /// From the query to the last member reply the queried EM got for it.
    pub last_reply: Option<Duration>,
}

/// What the client saw, shared with the scenario.
#[derive(Debug, Clone, Default)]
pub struct QueryLog {
    /// Creation requests sent (all entities, retries included).
    pub creation_attempts: u32,
    /// Whether every entity was created.
    pub created: bool,
    /// Every query, in order.
    pub outcomes: Vec<QueryOutcome>,
    /// Whether the client has finished (all queries made, or creation given up).
    pub done: bool,
    /// When the queried EM last got a member reply (set by the testbed's EM wrapper).
    pub last_member_reply: Option<Instant>,
}

/// A shared [`QueryLog`].
pub type SharedLog = Rc<RefCell<QueryLog>>;

/// Where the client is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Creating entity `index` (attempt `attempt`).
    Creating { index: usize, attempt: u32 },
    /// Waiting for the reply to the query sent at `sent`.
    Querying { sent: Instant },
    /// Pausing before the next query.
    Pausing,
    /// Finished.
    Done,
}

/// The client App.
#[derive(Debug)]
pub struct Querier {
    plan: QueryPlan,
    phase: Phase,
    log: SharedLog,
}

impl Querier {
    /// A client following `plan` that records into `log`.
    pub fn new(plan: QueryPlan, log: SharedLog) -> Querier {
        Querier {
            plan,
            phase: Phase::Creating {
                index: 0,
                attempt: 0,
            },
            log,
        }
    }

    fn create(&mut self, cx: &mut AppContext<'_>, index: usize, attempt: u32) {
        let Some(creation) = self.plan.creations.get(index) else {
            self.log.borrow_mut().created = true;
            self.query(cx);
            return;
        };
        if attempt >= CREATION_ATTEMPTS {
            self.finish();
            return;
        }
        self.phase = Phase::Creating { index, attempt };
        self.log.borrow_mut().creation_attempts += 1;
        let mut cf = [0u8; 4];
        let options = [
            opt(OptionNumber::URI_PATH, b"e"),
            opt(
                OptionNumber::CONTENT_FORMAT,
                uint::encode(u32::from(ContentFormat::JSON.0), &mut cf),
            ),
        ];
        let request = Request {
            method: Code::POST,
            options: &options,
            payload: creation.profile.as_bytes(),
        };
        let em = creation.em;
        if cx
            .send_request(em, &request, RequestParams::default())
            .is_err()
        {
            self.retry_creation(cx, index, attempt);
        }
    }

    fn retry_creation(&mut self, cx: &mut AppContext<'_>, index: usize, attempt: u32) {
        self.phase = Phase::Creating {
            index,
            attempt: attempt + 1,
        };
        if cx.set_timer(cx.now + CREATION_RETRY, NEXT).is_none() {
            self.finish();
        }
    }

    fn query(&mut self, cx: &mut AppContext<'_>) {
        if self.log.borrow().outcomes.len() >= self.plan.queries as usize {
            self.finish();
            return;
        }
        let mut accept = [0u8; 4];
        let mut options: Vec<CoapOption<'_>> = self
            .plan
            .path
            .iter()
            .map(|s| opt(OptionNumber::URI_PATH, s.as_bytes()))
            .collect();
        options.extend(
            self.plan
                .query
                .iter()
                .map(|q| opt(OptionNumber::URI_QUERY, q.as_bytes())),
        );
        options.push(opt(
            OptionNumber::ACCEPT,
            uint::encode(u32::from(ContentFormat::JSON.0), &mut accept),
        ));
        let request = Request {
            method: Code::GET,
            options: &options,
            payload: &[],
        };
        self.phase = Phase::Querying { sent: cx.now };
        if cx
            .send_request(self.plan.em, &request, RequestParams::default())
            .is_err()
        {
            self.record(cx, None, Tally::default());
        }
    }

    fn record(&mut self, cx: &mut AppContext<'_>, response_time: Option<Duration>, t: Tally) {
        let Phase::Querying { sent } = self.phase else {
            return;
        };
        let last_member_reply = self.log.borrow().last_member_reply;
        self.log.borrow_mut().outcomes.push(QueryOutcome {
            sent,
            response_time,
            answered: t.answered,
            members: t.members,
            last_reply: last_member_reply
                .filter(|at| *at >= sent)
                .map(|at| at - sent),
        });
        self.phase = Phase::Pausing;
        if cx.set_timer(cx.now + self.plan.gap, NEXT).is_none() {
            self.finish();
        }
    }

    fn finish(&mut self) {
        self.phase = Phase::Done;
        self.log.borrow_mut().done = true;
    }
}

/// What a combined JSON reply says (a 2.05, or the 5.04 or 5.02 of an incomplete query).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    answered: usize,
    members: usize,
}

/// Members answered and named in a combined JSON reply.
fn tally(payload: &[u8]) -> Tally {
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(payload) else {
        return Tally::default();
    };
    let count = |key: &str| doc.get(key).and_then(|v| v.as_array()).map_or(0, Vec::len);
    let answered = doc
        .get("answered")
        .and_then(serde_json::Value::as_u64)
        .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let named = |key: &str| {
        doc.get(key)
            .and_then(serde_json::Value::as_u64)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    };
    let missing = count("missing") + named("missing_more").unwrap_or(0);
    Tally {
        answered,
        members: named("members").unwrap_or(answered.saturating_add(missing)),
    }
}

impl App for Querier {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.create(cx, 0, 0);
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        match (self.phase, event) {
            (Phase::Creating { index, attempt }, Event::Timer(NEXT)) => {
                self.create(cx, index, attempt)
            }
            (Phase::Pausing, Event::Timer(NEXT)) => self.query(cx),
            (Phase::Creating { index, attempt }, Event::Response { key, last, .. }) => {
                if !last {
                    return;
                }
                let created = cx
                    .endpoint
                    .response(key)
                    .is_some_and(|r| r.message.code() == Code::CREATED);
                if created {
                    self.create(cx, index + 1, 0);
                } else {
                    self.retry_creation(cx, index, attempt);
                }
            }
            (Phase::Creating { index, attempt }, Event::Failed { .. }) => {
                self.retry_creation(cx, index, attempt)
            }
            (Phase::Querying { sent }, Event::Response { key, last, .. }) => {
                if !last {
                    return;
                }
                let t = cx
                    .endpoint
                    .response(key)
                    .map_or(Tally::default(), |r| tally(r.payload()));
                self.record(cx, Some(cx.now - sent), t);
            }
            (Phase::Querying { .. }, Event::Failed { .. }) => {
                self.record(cx, None, Tally::default())
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combined_replies_are_tallied() {
        let doc = br#"{"answered":2,"replies":[{"t":0.5},{"t":1.25}],"missing":["a","b"]}"#;
        let t = tally(doc);
        assert_eq!((t.answered, t.members), (2, 4));
        let trimmed = tally(br#"{"answered":18,"members":20,"missing":["a"],"replies":[]}"#);
        assert_eq!((trimmed.answered, trimmed.members), (18, 20));
        let more = tally(br#"{"answered":0,"missing":["a"],"missing_more":9}"#);
        assert_eq!((more.answered, more.members), (0, 10));
        assert_eq!(tally(b"not json"), Tally::default());
    }
}
