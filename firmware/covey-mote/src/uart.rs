//! UART0 of the LM3S6965 (an ARM PL011 with Stellaris's IDs; QEMU's lm3s6965evb models it):
//! the SLIP line. Received bytes are moved by the interrupt handler into a ring the main loop
//! drains, so a burst longer than the 16-byte FIFO is not lost while the engine works; bytes
//! are sent by polling the transmit FIFO.

use core::cell::RefCell;
use core::ptr::{read_volatile, write_volatile};

use cortex_m::interrupt::Mutex;
use lm3s6965::{interrupt, Interrupt};

/// UART0's registers (LM3S6965 data sheet, §12.5).
const BASE: usize = 0x4000_C000;
const DR: usize = BASE;
const FR: usize = BASE + 0x018;
const LCRH: usize = BASE + 0x02C;
const CTL: usize = BASE + 0x030;
const IM: usize = BASE + 0x038;
/// FR: receive FIFO empty, transmit FIFO full.
const FR_RXFE: u32 = 1 << 4;
const FR_TXFF: u32 = 1 << 5;
/// LCRH: 8 data bits, FIFOs on.
const LCRH_8N1_FIFO: u32 = (0b11 << 5) | (1 << 4);
/// CTL: UART, transmitter and receiver enabled.
const CTL_ENABLE: u32 = 1 | (1 << 8) | (1 << 9);
/// IM: receive and receive-timeout interrupts.
const INT_RX: u32 = (1 << 4) | (1 << 6);

/// Bytes the ring holds. When it is full the handler masks the receive interrupt and leaves
/// bytes in the FIFO, so the line backs up instead of losing them (QEMU's character device
/// offers a byte only when the FIFO has room, as RTS/CTS would on a wired line); reading
/// from the ring unmasks it.
const RING: usize = 512;

struct Ring {
    bytes: [u8; RING],
    head: usize,
    len: usize,
    /// Times the ring filled and the line was held back.
    pauses: u32,
}

static RX: Mutex<RefCell<Ring>> = Mutex::new(RefCell::new(Ring {
    bytes: [0; RING],
    head: 0,
    len: 0,
    pauses: 0,
}));

fn read(reg: usize) -> u32 {
    // SAFETY: `reg` is one of UART0's memory-mapped registers, valid for volatile access.
    unsafe { read_volatile(reg as *const u32) }
}

fn write(reg: usize, value: u32) {
    // SAFETY: as in `read`.
    unsafe { write_volatile(reg as *mut u32, value) }
}

/// Sets 8N1 with FIFOs, enables the UART and its receive interrupt.
pub fn init() {
    write(CTL, 0);
    write(LCRH, LCRH_8N1_FIFO);
    write(CTL, CTL_ENABLE);
    write(IM, INT_RX);
    // SAFETY: the handler below only touches the ring through the critical section.
    unsafe { cortex_m::peripheral::NVIC::unmask(Interrupt::UART0) };
}

/// Sends one byte, waiting while the transmit FIFO is full.
pub fn put(byte: u8) {
    while read(FR) & FR_TXFF != 0 {}
    write(DR, u32::from(byte));
}

/// The next received byte, if any.
pub fn get() -> Option<u8> {
    cortex_m::interrupt::free(|cs| {
        let mut ring = RX.borrow(cs).borrow_mut();
        if ring.len == 0 {
            // The main loop also looks at the FIFO itself, so a byte never waits on an
            // interrupt alone.
            drain_fifo(&mut ring);
            if ring.len == 0 {
                return None;
            }
        }
        let byte = ring.bytes[ring.head];
        ring.head = (ring.head + 1) % RING;
        ring.len -= 1;
        if ring.len == RING - 1 {
            // There was no room before this byte: let the handler take bytes again.
            write(IM, INT_RX);
        }
        Some(byte)
    })
}

/// Whether received bytes wait in the ring or the FIFO.
pub fn pending() -> bool {
    cortex_m::interrupt::free(|cs| RX.borrow(cs).borrow().len > 0 || read(FR) & FR_RXFE == 0)
}

/// Times the line was held back by a full ring since start.
pub fn pauses() -> u32 {
    cortex_m::interrupt::free(|cs| RX.borrow(cs).borrow().pauses)
}

/// Moves bytes from the FIFO into the ring until either is empty or full; when the ring is
/// full, masks the receive interrupt so the bytes wait in the FIFO (and the line backs up).
fn drain_fifo(ring: &mut Ring) {
    while read(FR) & FR_RXFE == 0 {
        if ring.len == RING {
            write(IM, 0);
            ring.pauses = ring.pauses.wrapping_add(1);
            return;
        }
        let byte = read(DR) as u8;
        let tail = (ring.head + ring.len) % RING;
        ring.bytes[tail] = byte;
        ring.len += 1;
    }
}

// The receive interrupt clears itself as the handler empties the FIFO (PL011 TRM §3.4.3);
// the handler does not write ICR, which would also clear it for a byte that arrived after
// the FIFO was last seen empty and leave that byte with no interrupt to fetch it.
#[interrupt]
fn UART0() {
    cortex_m::interrupt::free(|cs| drain_fifo(&mut RX.borrow(cs).borrow_mut()));
}
