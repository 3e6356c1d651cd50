//! The Entity Manager as a node of the test network, shared with the test for inspection.

use super::{addr, Network};
use covey_group::{EmConfig, EntityManager, MemoryStore};
use covey_proto::{App, AppContext, Config, Event};
use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;

/// The EM's node number: it is at `addr(1)`.
pub const EM: u16 = 1;

/// The EM's address.
pub fn em_addr() -> SocketAddr {
    addr(EM)
}

/// A configuration naming the EM's address, so it knows its own entities.
pub fn em_config() -> EmConfig {
    EmConfig {
        authorities: vec![em_addr()],
        ..EmConfig::default()
    }
}

/// The EM, reachable from the test.
pub type SharedEm = Rc<RefCell<EntityManager>>;

struct EmApp(SharedEm);

impl App for EmApp {
    fn start(&mut self, cx: &mut AppContext<'_>) {
        self.0.borrow_mut().start(cx);
    }

    fn handle_event(&mut self, cx: &mut AppContext<'_>, event: Event) {
        self.0.borrow_mut().handle_event(cx, event);
    }
}

/// Adds `em` as node `addr(EM)`.
pub fn add(net: &mut Network, em: EntityManager) -> (usize, SharedEm) {
    add_on(net, em, Config::default())
}

/// Adds `em` as node `addr(EM)` on an engine configured with `engine`.
pub fn add_on(net: &mut Network, em: EntityManager, engine: Config) -> (usize, SharedEm) {
    let shared = Rc::new(RefCell::new(em));
    let node = net.add(em_addr(), engine, 7, Some(Box::new(EmApp(shared.clone()))));
    (node, shared)
}

/// Adds an EM with `config` and an in-memory store.
pub fn add_in_memory(net: &mut Network, config: EmConfig) -> (usize, SharedEm) {
    let em = EntityManager::new(config, Box::new(MemoryStore::new())).expect("EM");
    add(net, em)
}

/// Replaces the EM of node `node` (a restart of the gateway).
pub fn restart(net: &mut Network, node: usize, em: EntityManager) -> SharedEm {
    let shared = Rc::new(RefCell::new(em));
    // A fresh seed, as a real restart starts from random message IDs and tokens.
    let seed = net.now.as_nanos() ^ 0x5eed;
    net.restart(
        node,
        Config::default(),
        seed,
        Some(Box::new(EmApp(shared.clone()))),
    );
    shared
}
