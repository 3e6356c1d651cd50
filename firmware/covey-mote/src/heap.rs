//! The heap the engine's tables live in, and its high-water mark: a first-fit allocator
//! (embedded-alloc's linked-list heap) wrapped to count the bytes in use and their peak.

use core::alloc::{GlobalAlloc, Layout};
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicUsize, Ordering};

use embedded_alloc::LlffHeap;

/// Bytes of RAM given to the heap: the budget the engine's configuration is sized for.
pub const SIZE: usize = 16 * 1024;

/// The allocator with its tallies.
pub struct CountingHeap {
    heap: LlffHeap,
    used: AtomicUsize,
    peak: AtomicUsize,
}

#[global_allocator]
pub static HEAP: CountingHeap = CountingHeap {
    heap: LlffHeap::empty(),
    used: AtomicUsize::new(0),
    peak: AtomicUsize::new(0),
};

/// The arena, in cortex-m-rt's `.uninit` (after `.bss`, not zeroed at start), so that the
/// ELF's `.data` + `.bss` is the static RAM without the heap.
#[link_section = ".uninit.heap"]
static mut ARENA: MaybeUninit<[u8; SIZE]> = MaybeUninit::uninit();

impl CountingHeap {
    /// Hands the arena to the allocator; call once, first thing.
    pub fn init(&self) {
        // SAFETY: called once before any allocation; ARENA is used by nothing else.
        unsafe {
            self.heap
                .init(core::ptr::addr_of_mut!(ARENA) as usize, SIZE)
        }
    }

    /// Bytes allocated now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The most bytes ever allocated at once.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

// SAFETY: forwards to LlffHeap, which is a GlobalAlloc; the tallies do not touch memory.
unsafe impl GlobalAlloc for CountingHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { self.heap.alloc(layout) };
        if !ptr.is_null() {
            // Loads and stores, not read-modify-write atomics (exclusive-access loops on the
            // M3): only the main loop allocates, never an interrupt handler.
            let used = self.used() + layout.size();
            self.used.store(used, Ordering::Relaxed);
            if used > self.peak() {
                self.peak.store(used, Ordering::Relaxed);
            }
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.heap.dealloc(ptr, layout) };
        self.used
            .store(self.used() - layout.size(), Ordering::Relaxed);
    }
}
