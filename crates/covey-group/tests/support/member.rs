//! Member nodes for the EM's tests: a sensor answering `GET /s/t` with a number (in a chosen
//! format), recording writes, and serving the group-membership resource `/mc`.

use super::{addr, GroupTable, Network};
use covey_core::{uint, Code, ContentFormat, OptionNumber};
use covey_group::senml::{self, Record};
use covey_proto::{opt, App, AppContext, Config, Event, Response};
use std::cell::RefCell;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::rc::Rc;

/// How a sensor writes its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Format {
    /// `21.5` as text/plain.
    Text,
    /// A JSON number.
    Json,
    /// A CBOR number.
    Cbor,
    /// One SenML JSON record.
    SenmlJson,
    /// One SenML CBOR record.
    SenmlCbor,
    /// A word instead of a number (text/plain).
    Word(&'static str),
}

/// What a sensor saw and how it behaves; shared with the test.
#[derive(Debug, Default)]
pub struct SensorState {
    /// Its value.
    pub value: f64,
    /// GET /s/t requests answered.
    pub gets: u32,
    /// Multicast GETs among them.
    pub multicast_gets: u32,
    /// PUT/POST/DELETE to /s/t: method and payload.
    pub writes: Vec<(Code, Vec<u8>)>,
    /// `/mc` requests: the `act` values.
    pub membership: Vec<String>,
    /// Groups joined.
    pub groups: Vec<IpAddr>,
    /// Silent: answers nothing.
    pub mute: bool,
    /// `/s/t` is observable (RFC 7641).
    pub observable: bool,
    /// GETs of `/s/t` with Observe 0.
    pub registrations: u32,
    /// GETs of `/s/t` with Observe 1.
    pub deregistrations: u32,
}

/// The engine resource of an observable sensor's `/s/t`.
pub const SENSOR_RESOURCE: u64 = 1;

/// Sets sensor node `node`'s value (written in `format`) and notifies its observers;
/// returns how many it notified.
pub fn change(net: &mut Network, node: usize, state: &Shared, format: Format, value: f64) -> usize {
    state.borrow_mut().value = value;
    let (cf, bytes) = body(format, value);
    let mut buf = [0u8; 4];
    let options = [opt(
        OptionNumber::CONTENT_FORMAT,
        uint::encode(u32::from(cf.0), &mut buf),
    )];
    let now = net.now;
    let notified = net.nodes[node].endpoint.notify(
        now,
        SENSOR_RESOURCE,
        &Response {
            code: Code::CONTENT,
            options: &options,
            payload: &bytes,
        },
    );
    net.flush(node);
    notified
}

/// Observers of sensor node `node`'s `/s/t`.
pub fn observers(net: &Network, node: usize) -> usize {
    net.nodes[node].endpoint.observer_count(SENSOR_RESOURCE)
}

/// A shared sensor state.
pub type Shared = Rc<RefCell<SensorState>>;

/// A sensor node's application.
pub struct Sensor {
    addr: SocketAddr,
    format: Format,
    max_groups: usize,
    table: GroupTable,
    state: Shared,
}

/// Adds sensor node `n` (at `addr(n)`) with `value` written in `format`, able to join up to
/// `max_groups` groups.
pub fn sensor(
    net: &mut Network,
    n: u16,
    value: f64,
    format: Format,
    max_groups: usize,
) -> (usize, Shared) {
    let state: Shared = Rc::new(RefCell::new(SensorState {
        value,
        ..SensorState::default()
    }));
    let app = Sensor {
        addr: addr(n),
        format,
        max_groups,
        table: net.groups(),
        state: state.clone(),
    };
    let node = net.add(
        addr(n),
        Config::default(),
        1000 + u64::from(n),
        Some(Box::new(app)),
    );
    (node, state)
}

fn body(format: Format, value: f64) -> (ContentFormat, Vec<u8>) {
    let record = Record {
        base_name: Some("urn:dev:test:".into()),
        name: Some("temp".into()),
        unit: Some("Cel".into()),
        value: Some(value),
        ..Record::default()
    };
    match format {
        Format::Text => (ContentFormat::TEXT_PLAIN, value.to_string().into_bytes()),
        Format::Json => (ContentFormat::JSON, serde_json::to_vec(&value).unwrap()),
        Format::Cbor => {
            let mut out = Vec::new();
            ciborium::ser::into_writer(&value, &mut out).unwrap();
            (ContentFormat::CBOR, out)
        }
        Format::SenmlJson => (ContentFormat::SENML_JSON, senml::to_json(&[record])),
        Format::SenmlCbor => (ContentFormat::SENML_CBOR, senml::to_cbor(&[record])),
        Format::Word(w) => (ContentFormat::TEXT_PLAIN, w.as_bytes().to_vec()),
    }
}

impl Sensor {
    fn membership(&mut self, query: &[String], payload: &[u8]) -> (Code, String) {
        let act = query
            .iter()
            .find_map(|q| q.strip_prefix("act="))
            .unwrap_or("")
            .to_string();
        self.state.borrow_mut().membership.push(act.clone());
        let Ok(octets) = <[u8; 16]>::try_from(payload) else {
            return (Code::BAD_REQUEST, "payload must be 16 bytes".into());
        };
        let group = IpAddr::V6(Ipv6Addr::from(octets));
        if !group.is_multicast() {
            return (Code::BAD_REQUEST, format!("{group} is not multicast"));
        }
        let mut st = self.state.borrow_mut();
        match act.as_str() {
            "add" if st.groups.contains(&group) => (Code::CHANGED, String::new()),
            "add" if st.groups.len() >= self.max_groups => {
                (Code::SERVICE_UNAVAILABLE, "group table full".into())
            }
            "add" => {
                st.groups.push(group);
                self.table
                    .borrow_mut()
                    .entry(group)
                    .or_default()
                    .push(self.addr);
                (Code::CHANGED, String::new())
            }
            "del" if st.groups.contains(&group) => {
                st.groups.retain(|g| *g != group);
                if let Some(v) = self.table.borrow_mut().get_mut(&group) {
                    v.retain(|a| *a != self.addr);
                }
                (Code::DELETED, String::new())
            }
            "del" => (Code::NOT_FOUND, format!("not a member of {group}")),
            _ => (Code::BAD_REQUEST, "query must be act=add or act=del".into()),
        }
    }
}

impl App for Sensor {
    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        let (ep, now) = (&mut *cx.endpoint, cx.now);
        let Event::Request(id) = event else {
            return;
        };
        let Some(req) = ep.request(id) else {
            return;
        };
        if self.state.borrow().mute {
            return;
        }
        let method = req.message.code();
        let path: Vec<String> = req.message.uri_path().map(str::to_string).collect();
        let query: Vec<String> = req.message.uri_query().map(str::to_string).collect();
        let payload = req.payload().to_vec();
        let multicast = req.is_multicast();
        let observe = req.message.uint_option(OptionNumber::OBSERVE);
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        let mut cf = [0u8; 4];
        match (path.as_slice(), method) {
            (["s", "t"], Code::GET) => {
                let (value, observable) = {
                    let mut st = self.state.borrow_mut();
                    st.gets += 1;
                    match observe {
                        Some(0) => st.registrations += 1,
                        Some(1) => st.deregistrations += 1,
                        _ => {}
                    }
                    if multicast {
                        st.multicast_gets += 1;
                    }
                    (st.value, st.observable)
                };
                let (format, bytes) = body(self.format, value);
                let options = [opt(
                    OptionNumber::CONTENT_FORMAT,
                    uint::encode(u32::from(format.0), &mut cf),
                )];
                let response = Response {
                    code: Code::CONTENT,
                    options: &options,
                    payload: &bytes,
                };
                if observable {
                    let _ = ep.respond_observable(now, id, SENSOR_RESOURCE, &response);
                } else {
                    let _ = ep.respond(now, id, &response);
                }
            }
            (["s", "t"], m) => {
                self.state.borrow_mut().writes.push((m, payload));
                let code = if m == Code::DELETE {
                    Code::DELETED
                } else {
                    Code::CHANGED
                };
                let _ = ep.respond(now, id, &Response::new(code));
            }
            (["mc"], Code::GET) => {
                let text: String = self
                    .state
                    .borrow()
                    .groups
                    .iter()
                    .map(|g| format!("{g}\n"))
                    .collect();
                let _ = ep.respond(
                    now,
                    id,
                    &Response::with_payload(Code::CONTENT, text.as_bytes()),
                );
            }
            (["mc"], Code::POST) => {
                let (code, diag) = self.membership(&query, &payload);
                let _ = ep.respond(now, id, &Response::with_payload(code, diag.as_bytes()));
            }
            _ => {
                let _ = ep.respond(now, id, &Response::new(Code::NOT_FOUND));
            }
        }
    }
}
