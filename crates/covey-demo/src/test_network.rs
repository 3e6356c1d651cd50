//! An in-memory network on virtual time for the resource Apps' tests: the App on node 0 with
//! a wall clock that follows virtual time, and a client on node 1 recording every response.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use covey_core::{Code, ContentFormat};
use covey_proto::testing::{addr, FnApp, Network};
use covey_proto::{App, Config, Endpoint, Event, Instant};

use super::wall_clock::WallClock;

/// A wall clock that follows the network's virtual time, `epoch` at `Instant::ZERO`.
struct VirtualClock {
    epoch: Duration,
}

impl WallClock for VirtualClock {
    fn since_epoch(&self, now: Instant) -> Duration {
        self.epoch + (now - Instant::ZERO)
    }
}

/// A response as the client saw it: when, code, Content-Format, payload.
pub type Seen = (Instant, Code, Option<ContentFormat>, String);

/// The responses the client has seen so far.
pub type SeenLog = Rc<RefCell<Vec<Seen>>>;

/// A network with the App `make` builds on node 0 (at `addr(1)`) and a recording client on
/// node 1; the wall clock reads 2023-11-14T22:13:20.3Z when the network starts.
pub fn network(make: impl FnOnce(Box<dyn WallClock>) -> Box<dyn App>) -> (Network, usize, SeenLog) {
    let mut net = Network::new(Duration::from_millis(5), 0.0, 7);
    let start = net.now - Instant::ZERO;
    let clock = VirtualClock {
        epoch: Duration::from_millis(1_700_000_000_300) - start,
    };
    net.add(addr(1), Config::default(), 1, Some(make(Box::new(clock))));
    let seen = SeenLog::default();
    let log = seen.clone();
    let record = move |endpoint: &mut Endpoint, now, event| {
        if let Event::Response { key, .. } = event {
            if let Some(r) = endpoint.response(key) {
                let text = String::from_utf8_lossy(r.payload()).into_owned();
                let format = r.message.content_format();
                log.borrow_mut().push((now, r.message.code(), format, text));
            }
        }
    };
    let client = net.add(addr(2), Config::default(), 2, Some(Box::new(FnApp(record))));
    (net, client, seen)
}
