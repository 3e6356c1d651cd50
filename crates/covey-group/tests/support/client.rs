//! A client node for the EM's tests: sends one request and runs the network until its
//! answer (or answers, for a multicast request) arrived.

use super::Network;
use covey_core::{uint, CoapOption, Code, ContentFormat, OptionNumber};
use covey_proto::{
    opt, App, AppContext, Config, Duration, Endpoint, Event, Failure, Instant, Request, RequestId,
    RequestParams,
};
use std::cell::RefCell;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::rc::Rc;

/// One response.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Its code.
    pub code: Code,
    /// Its Content-Format.
    pub content_format: Option<ContentFormat>,
    /// Its (reassembled) payload.
    pub payload: Vec<u8>,
    /// Location-Path segments.
    pub location: Vec<String>,
    /// Max-Age, when given.
    pub max_age: Option<u32>,
    /// ETag, when given.
    pub etag: Option<Vec<u8>>,
    /// Observe, when given (a registration's answer or a notification).
    pub observe: Option<u32>,
    /// Who sent it.
    pub source: SocketAddr,
    /// When it arrived.
    pub at: Instant,
}

impl Answer {
    /// The payload as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.payload).into_owned()
    }

    /// The diagnostic of a refusal: the `error` of an error report (the EM's answer to a
    /// client that asked for JSON), else the payload as text.
    pub fn diagnostic(&self) -> String {
        covey_group::ErrorReport::from_response(self.content_format, &self.payload)
            .map_or_else(|| self.text(), |r| r.error)
    }

    /// The payload as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.payload)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

#[derive(Default)]
struct Results {
    answers: HashMap<RequestId, Vec<Answer>>,
    ended: HashMap<RequestId, Option<Failure>>,
}

struct Recorder(Rc<RefCell<Results>>);

impl App for Recorder {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        let (ep, now) = (&mut *cx.endpoint, cx.now);
        let mut r = self.0.borrow_mut();
        match event {
            Event::Response { id, key, last } => {
                if let Some(resp) = ep.response(key) {
                    let m = &resp.message;
                    r.answers.entry(id).or_default().push(Answer {
                        code: m.code(),
                        content_format: m.content_format(),
                        payload: resp.payload().to_vec(),
                        location: m
                            .options_of(OptionNumber::LOCATION_PATH)
                            .map(|v| String::from_utf8_lossy(v).into_owned())
                            .collect(),
                        max_age: m.uint_option(OptionNumber::MAX_AGE),
                        etag: m.option(OptionNumber::ETAG).map(<[u8]>::to_vec),
                        observe: m.uint_option(OptionNumber::OBSERVE),
                        source: resp.source,
                        at: now,
                    });
                }
                if last {
                    r.ended.insert(id, None);
                }
            }
            Event::Failed { id, failure } => {
                r.ended.insert(id, Some(failure));
            }
            Event::Finished(id) => {
                r.ended.insert(id, None);
            }
            _ => {}
        }
    }
}

/// A client node.
pub struct Client {
    /// Its node index.
    pub node: usize,
    results: Rc<RefCell<Results>>,
}

/// What to send.
#[derive(Debug, Clone, Default)]
pub struct Req<'a> {
    /// Path and query, e.g. `/e/room1?eo=avg`.
    pub target: &'a str,
    /// Accept.
    pub accept: Option<ContentFormat>,
    /// Content-Format of the payload.
    pub content_format: Option<ContentFormat>,
    /// The payload.
    pub payload: &'a [u8],
    /// Send If-None-Match.
    pub if_none_match: bool,
    /// Send If-Match with this value.
    pub if_match: Option<&'a [u8]>,
    /// Send Hop-Limit.
    pub hop_limit: Option<u8>,
    /// Send Observe with this value (0 registers, 1 deregisters).
    pub observe: Option<u32>,
}

impl Client {
    /// Adds a client node at `address`.
    pub fn add(net: &mut Network, address: SocketAddr, seed: u64) -> Client {
        let results = Rc::new(RefCell::new(Results::default()));
        let node = net.add(
            address,
            Config::default(),
            seed,
            Some(Box::new(Recorder(results.clone()))),
        );
        Client { node, results }
    }

    fn send(
        &self,
        net: &mut Network,
        to: SocketAddr,
        method: Code,
        req: &Req<'_>,
        confirmable: bool,
    ) -> RequestId {
        let (path, query) = req.target.split_once('?').unwrap_or((req.target, ""));
        let mut options: Vec<CoapOption<'_>> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| opt(OptionNumber::URI_PATH, s.as_bytes()))
            .collect();
        options.extend(
            query
                .split('&')
                .filter(|q| !q.is_empty())
                .map(|q| opt(OptionNumber::URI_QUERY, q.as_bytes())),
        );
        let (mut a, mut c) = ([0u8; 4], [0u8; 4]);
        if let Some(accept) = req.accept {
            options.push(opt(
                OptionNumber::ACCEPT,
                uint::encode(u32::from(accept.0), &mut a),
            ));
        }
        if let Some(cf) = req.content_format {
            options.push(opt(
                OptionNumber::CONTENT_FORMAT,
                uint::encode(u32::from(cf.0), &mut c),
            ));
        }
        if req.if_none_match {
            options.push(opt(OptionNumber::IF_NONE_MATCH, &[]));
        }
        if let Some(tag) = req.if_match {
            options.push(opt(OptionNumber::IF_MATCH, tag));
        }
        let mut obs = [0u8; 4];
        if let Some(o) = req.observe {
            options.push(opt(OptionNumber::OBSERVE, uint::encode(o, &mut obs)));
        }
        let hop = req.hop_limit.map(|h| [h]);
        if let Some(h) = hop.as_ref() {
            options.push(opt(OptionNumber::HOP_LIMIT, h));
        }
        let now = net.now;
        let id = net.nodes[self.node]
            .endpoint
            .send_request(
                now,
                to,
                &Request {
                    method,
                    options: &options,
                    payload: req.payload,
                },
                RequestParams {
                    confirmable,
                    ..RequestParams::default()
                },
            )
            .expect("request starts");
        net.flush(self.node);
        id
    }

    /// Sends a CON request without waiting for its answer.
    pub fn start(
        &self,
        net: &mut Network,
        to: SocketAddr,
        method: Code,
        req: Req<'_>,
    ) -> RequestId {
        self.send(net, to, method, &req, true)
    }

    /// The answers request `id` got so far.
    pub fn answers(&self, id: RequestId) -> Vec<Answer> {
        self.results
            .borrow()
            .answers
            .get(&id)
            .cloned()
            .unwrap_or_default()
    }

    /// Sends a NON request without waiting for its answer.
    pub fn start_non(
        &self,
        net: &mut Network,
        to: SocketAddr,
        method: Code,
        req: Req<'_>,
    ) -> RequestId {
        self.send(net, to, method, &req, false)
    }

    /// Ends observation `id` politely (a GET with Observe 1 and its token); returns the
    /// deregistration request.
    pub fn cancel_observation(&self, net: &mut Network, id: RequestId) -> RequestId {
        let now = net.now;
        let dereg = net.nodes[self.node]
            .endpoint
            .cancel_observation(now, id)
            .expect("deregistration starts");
        net.flush(self.node);
        dereg
    }

    /// Whether request `id` got its (last) answer or failed.
    pub fn ended(&self, id: RequestId) -> bool {
        self.results.borrow().ended.contains_key(&id)
    }

    /// Sends a CON request and runs the network until its response; panics on failure.
    pub fn call(&self, net: &mut Network, to: SocketAddr, method: Code, req: Req<'_>) -> Answer {
        let id = self.send(net, to, method, &req, true);
        let deadline = net.now + Duration::from_secs(600);
        loop {
            let ended = self.results.borrow_mut().ended.remove(&id);
            if let Some(end) = ended {
                if let Some(f) = end {
                    panic!("{method} {} failed: {f}", req.target);
                }
                let answers = self
                    .results
                    .borrow_mut()
                    .answers
                    .remove(&id)
                    .unwrap_or_default();
                return answers.into_iter().last().expect("a response");
            }
            assert!(net.now < deadline, "{method} {}: no answer", req.target);
            net.run_for(Duration::from_millis(20));
        }
    }

    /// GET with an Accept option.
    pub fn get(
        &self,
        net: &mut Network,
        to: SocketAddr,
        target: &str,
        accept: Option<ContentFormat>,
    ) -> Answer {
        self.call(
            net,
            to,
            Code::GET,
            Req {
                target,
                accept,
                ..Req::default()
            },
        )
    }

    /// POST a JSON document.
    pub fn post_json(&self, net: &mut Network, to: SocketAddr, target: &str, json: &str) -> Answer {
        self.call(
            net,
            to,
            Code::POST,
            Req {
                target,
                content_format: Some(ContentFormat::JSON),
                payload: json.as_bytes(),
                ..Req::default()
            },
        )
    }

    /// A NON request to a group: every response until the window closes.
    pub fn multicast(&self, net: &mut Network, group: SocketAddr, target: &str) -> Vec<Answer> {
        let req = Req {
            target,
            ..Req::default()
        };
        let id = self.send(net, group, Code::GET, &req, false);
        let deadline = net.now + Duration::from_secs(60);
        while !self.results.borrow().ended.contains_key(&id) {
            assert!(net.now < deadline, "the multicast window never closed");
            net.run_for(Duration::from_millis(100));
        }
        self.results
            .borrow_mut()
            .answers
            .remove(&id)
            .unwrap_or_default()
    }
}
