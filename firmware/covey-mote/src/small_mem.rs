//! Byte-at-a-time `memcpy`, `memmove` and `memset`, and the ARM EABI entry points the compiler
//! calls for them (the run-time ABI, IHI 0043, §4.3.4: `__aeabi_memcpy` and its 4- and
//! 8-byte-aligned forms, `__aeabi_memmove*`, `__aeabi_memset*`, `__aeabi_memclr*`), in place
//! of compiler-builtins' word-at-a-time versions (about 3 KiB of flash, more than a tenth of a
//! TelosB-class budget). compiler-builtins defines its own with weak linkage so that a program
//! can replace them; newlib does the same trade for `-Os` builds (`PREFER_SIZE_OVER_SPEED`).
//! The mote copies a few hundred bytes per message, which these do in well under a
//! millisecond at 12.5 MHz, while the serial line takes 50 ms to carry them.
//!
//! Volatile accesses keep the compiler from recognising the loops as a copy or a fill and
//! calling these very functions from inside them.

use core::ptr::{read_volatile, write_volatile};

/// Copies `n` bytes from `src` to `dst`, lowest address first.
///
/// # Safety
/// `src` readable and `dst` writable for `n` bytes; where they overlap, `dst` below `src`.
unsafe fn copy_up(dst: *mut u8, src: *const u8, n: usize) {
    for i in 0..n {
        // SAFETY: within the `n` bytes the caller vouches for.
        unsafe { write_volatile(dst.add(i), read_volatile(src.add(i))) };
    }
}

/// Copies `n` bytes from `src` to `dst`, highest address first.
///
/// # Safety
/// As [`copy_up`], with `dst` above `src` where they overlap.
unsafe fn copy_down(dst: *mut u8, src: *const u8, n: usize) {
    for i in (0..n).rev() {
        // SAFETY: within the `n` bytes the caller vouches for.
        unsafe { write_volatile(dst.add(i), read_volatile(src.add(i))) };
    }
}

/// Sets `n` bytes at `dst` to `value`.
///
/// # Safety
/// `dst` writable for `n` bytes.
unsafe fn fill(dst: *mut u8, value: u8, n: usize) {
    for i in 0..n {
        // SAFETY: within the `n` bytes the caller vouches for.
        unsafe { write_volatile(dst.add(i), value) };
    }
}

/// Copies `n` bytes between regions that may overlap.
///
/// # Safety
/// `src` readable and `dst` writable for `n` bytes.
unsafe fn move_bytes(dst: *mut u8, src: *const u8, n: usize) {
    if (dst as usize) <= (src as usize) {
        // SAFETY: the caller's guarantee; copying upwards is right when `dst` is below.
        unsafe { copy_up(dst, src, n) }
    } else {
        // SAFETY: as above, downwards when `dst` is above.
        unsafe { copy_down(dst, src, n) }
    }
}

/// C's `memcpy`.
///
/// # Safety
/// C's: `src` readable and `dst` writable for `n` bytes, not overlapping.
#[no_mangle]
pub unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: C's contract, which the caller keeps.
    unsafe { copy_up(dst, src, n) };
    dst
}

/// C's `memmove`.
///
/// # Safety
/// C's: `src` readable and `dst` writable for `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: C's contract, which the caller keeps.
    unsafe { move_bytes(dst, src, n) };
    dst
}

/// C's `memset`.
///
/// # Safety
/// C's: `dst` writable for `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memset(dst: *mut u8, value: i32, n: usize) -> *mut u8 {
    // SAFETY: C's contract, which the caller keeps; C passes the byte as an int.
    unsafe { fill(dst, value as u8, n) };
    dst
}

/// Defines the EABI copy entry points (`dst, src, n`; alignment hints ignored).
macro_rules! aeabi_copy {
    ($($name:ident => $with:ident),* $(,)?) => {$(
        /// An ARM EABI run-time helper (IHI 0043 §4.3.4).
        ///
        /// # Safety
        /// As C's `memcpy` or `memmove`.
        #[no_mangle]
        pub unsafe extern "aapcs" fn $name(dst: *mut u8, src: *const u8, n: usize) {
            // SAFETY: the EABI's contract, which the caller keeps.
            unsafe { $with(dst, src, n) }
        }
    )*};
}

aeabi_copy! {
    __aeabi_memcpy => copy_up,
    __aeabi_memcpy4 => copy_up,
    __aeabi_memcpy8 => copy_up,
    __aeabi_memmove => move_bytes,
    __aeabi_memmove4 => move_bytes,
    __aeabi_memmove8 => move_bytes,
}

/// Defines the EABI fill entry points: `__aeabi_memset*` take `dst, n, value` (not C's
/// order), `__aeabi_memclr*` `dst, n`.
macro_rules! aeabi_fill {
    ($($set:ident, $clear:ident);* $(;)?) => {$(
        /// An ARM EABI run-time helper (IHI 0043 §4.3.4): `memset` with `n` before `value`.
        ///
        /// # Safety
        /// As C's `memset`.
        #[no_mangle]
        pub unsafe extern "aapcs" fn $set(dst: *mut u8, n: usize, value: i32) {
            // SAFETY: the EABI's contract, which the caller keeps.
            unsafe { fill(dst, value as u8, n) }
        }

        /// An ARM EABI run-time helper (IHI 0043 §4.3.4): `memset` to zero.
        ///
        /// # Safety
        /// As C's `memset`.
        #[no_mangle]
        pub unsafe extern "aapcs" fn $clear(dst: *mut u8, n: usize) {
            // SAFETY: the EABI's contract, which the caller keeps.
            unsafe { fill(dst, 0, n) }
        }
    )*};
}

aeabi_fill! {
    __aeabi_memset, __aeabi_memclr;
    __aeabi_memset4, __aeabi_memclr4;
    __aeabi_memset8, __aeabi_memclr8;
}
