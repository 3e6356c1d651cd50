//! A global allocator that counts the allocations and reallocations the current thread makes
//! while counting is switched on, and the heap they leave held, so a test can prove that a
//! code path allocates nothing and measure what a structure keeps.
//!
//! Set `COVEY_TRACE_ALLOC=1` to print a backtrace of the first counted allocation of each
//! measured section (run with `--nocapture` to see it).
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// Wraps the system allocator; counts per thread, and only inside [`count`].
pub struct CountingAlloc;

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
    static NET: Cell<i64> = const { Cell::new(0) };
}

/// Adds `delta` bytes to the heap held on this thread while counting.
fn record_net(delta: i64) {
    if ACTIVE.try_with(Cell::get).unwrap_or(false) {
        NET.with(|n| n.set(n.get() + delta));
    }
}

/// Print a backtrace at the first counted allocation of a section.
static TRACE: AtomicBool = AtomicBool::new(false);

fn record(size: usize) {
    let active = ACTIVE.try_with(Cell::get).unwrap_or(false);
    if !active {
        return;
    }
    let first = COUNT.with(|c| {
        c.set(c.get() + 1);
        c.get() == 1
    });
    BYTES.with(|b| b.set(b.get() + size as u64));
    if first && TRACE.load(Ordering::Relaxed) {
        // Capturing and printing allocate: stop counting meanwhile, so this neither
        // recurses nor inflates the figures.
        ACTIVE.with(|a| a.set(false));
        let trace = std::backtrace::Backtrace::force_capture();
        eprintln!("first allocation in a measured section ({size} bytes):\n{trace}");
        ACTIVE.with(|a| a.set(true));
    }
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds the `GlobalAlloc`
// contract; the bookkeeping only touches const-initialised thread-local `Cell`s (no
// allocation, no destructors) outside a traced section.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        record_net(layout.size() as i64);
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        record_net(layout.size() as i64);
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        record_net(new_size as i64 - layout.size() as i64);
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        record_net(-(layout.size() as i64));
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// What a measured section allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Allocations {
    /// Calls to `alloc`, `alloc_zeroed` and `realloc`.
    pub count: u64,
    /// Bytes requested by those calls.
    pub bytes: u64,
    /// Heap bytes held at the end of the section minus at its start (what survives it).
    pub net_bytes: i64,
}

/// Runs `f` with counting on for this thread and returns its result and what it allocated.
pub fn count<R>(f: impl FnOnce() -> R) -> (R, Allocations) {
    TRACE.store(
        std::env::var_os("COVEY_TRACE_ALLOC").is_some_and(|v| !v.is_empty() && v != "0"),
        Ordering::Relaxed,
    );
    COUNT.with(|c| c.set(0));
    BYTES.with(|b| b.set(0));
    NET.with(|n| n.set(0));
    ACTIVE.with(|a| a.set(true));
    let result = f();
    ACTIVE.with(|a| a.set(false));
    let allocations = Allocations {
        count: COUNT.with(Cell::get),
        bytes: BYTES.with(Cell::get),
        net_bytes: NET.with(Cell::get),
    };
    (result, allocations)
}
