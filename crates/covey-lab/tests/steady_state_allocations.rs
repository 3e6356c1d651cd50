//! Once warm, simulating allocates nothing per event: the link model, the event queue, the
//! packet store and the engines reuse their storage.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use covey_lab::scenarios::cc_bottleneck::client::{ClientKind, WorkloadClient};
use covey_lab::scenarios::cc_bottleneck::node::CcNode;
use covey_lab::scenarios::cc_bottleneck::run::{bottleneck, client_config, server_config};
use covey_lab::scenarios::cc_bottleneck::server::ResourceServer;
use covey_lab::scenarios::cc_bottleneck::Params;
use covey_proto::cc::Algorithm;
use covey_proto::Duration;
use covey_sim::media::Dumbbell;
use covey_sim::sim::{node_addr, Simulator};

/// The system allocator, counting this thread's allocations while switched on.
struct Counting;

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

fn note() {
    if ON.try_with(Cell::get).unwrap_or(false) {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every call is forwarded unchanged to `System`; counting touches only
// thread-local cells, which do not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations made by `f` on this thread.
fn allocations(f: impl FnOnce()) -> u64 {
    COUNT.with(|c| c.set(0));
    ON.with(|o| o.set(true));
    f();
    ON.with(|o| o.set(false));
    COUNT.with(Cell::get)
}

#[test]
fn a_warm_simulation_allocates_nothing_per_event() {
    let params = Params::default();
    let clients: Vec<usize> = (1..=10).collect();
    let medium = Dumbbell::build(&clients, 0, bottleneck(&params), 7);
    let mut sim: Simulator<_, CcNode> = Simulator::new(medium, 7);
    sim.add_node(
        server_config(10, params.max_retransmit),
        CcNode::Server(ResourceServer::default()),
    )
    .unwrap();
    for _ in &clients {
        let c = WorkloadClient::new(
            ClientKind::Continuous,
            node_addr(0),
            10_000,
            Duration::from_secs(1),
        );
        sim.add_node(
            client_config(Algorithm::Cocoa, params.max_retransmit),
            CcNode::Client(c),
        )
        .unwrap();
    }
    // The counter sees allocations at all.
    assert!(allocations(|| drop(std::hint::black_box(vec![1u8; 64]))) > 0);
    // Warm up: every table and buffer reaches its working size.
    for _ in 0..50_000 {
        sim.step();
    }
    let before = sim.stats().steps;
    let n = allocations(|| {
        for _ in 0..20_000 {
            sim.step();
        }
    });
    assert_eq!(
        sim.stats().steps - before,
        20_000,
        "the run was still going"
    );
    assert_eq!(n, 0, "allocations in 20 000 warm simulator steps");
}
