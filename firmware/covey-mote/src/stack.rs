//! The stack's high-water mark by painting: at start, the RAM between the end of static data
//! and the stack pointer is filled with a pattern; the deepest word no longer holding it is
//! as far as the stack has grown.

/// The pattern painted below the stack.
const PAINT: u32 = 0xC0FE_C0FE;

extern "C" {
    /// End of .bss and .uninit (the heap arena): where the stack may grow down to
    /// (cortex-m-rt's link.x).
    static mut __sheap: u32;
    /// End of .bss: static data without the heap arena.
    static __ebss: u32;
    /// The top of RAM, where the stack starts.
    static _stack_start: u32;
}

fn bottom() -> *mut u32 {
    core::ptr::addr_of_mut!(__sheap)
}

fn top() -> usize {
    core::ptr::addr_of!(_stack_start) as usize
}

/// Paints from the end of static data up to a margin below the current stack pointer.
pub fn paint() {
    let sp = cortex_m::register::msp::read() as usize;
    let mut word = bottom();
    // Leave 64 bytes under the current frame alone.
    while (word as usize) + 64 < sp {
        // SAFETY: the words between the heap arena's end and the live stack belong to no one
        // yet.
        unsafe { word.write_volatile(PAINT) };
        word = word.wrapping_add(1);
    }
}

/// The most bytes of stack used since `paint`.
pub fn peak() -> usize {
    let mut word = bottom();
    // SAFETY: reads within RAM, between the end of static data and the stack's top.
    while (word as usize) < top() && unsafe { word.read_volatile() } == PAINT {
        word = word.wrapping_add(1);
    }
    top() - word as usize
}

/// Bytes of static data (.data and .bss, without the heap arena) from RAM's start.
pub fn static_bytes() -> usize {
    core::ptr::addr_of!(__ebss) as usize - 0x2000_0000
}
