//! The mote's clock: SysTick interrupts every millisecond, counted in a 64-bit tally the
//! engine reads as its `Instant`.

use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;
use cortex_m_rt::exception;

/// The core clock QEMU gives the lm3s6965evb after reset: its 200 MHz PLL divided by the
/// reset value of RCC's SYSDIV field plus one (16), 12.5 MHz (QEMU's hw/arm/stellaris.c,
/// `ssys_calculate_system_clock`).
const CORE_HZ: u32 = 12_500_000;

/// Milliseconds since start, low and high words (a u64 atomic needs ARMv7's LDREXD, which
/// thumbv7m lacks; the high word is read twice around the low one instead).
static LOW: AtomicU32 = AtomicU32::new(0);
static HIGH: AtomicU32 = AtomicU32::new(0);

/// Starts SysTick at 1 kHz from the core clock.
pub fn start(mut syst: SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(CORE_HZ / 1000 - 1);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

/// Milliseconds since start.
pub fn now_ms() -> u64 {
    loop {
        let high = HIGH.load(Ordering::Acquire);
        let low = LOW.load(Ordering::Acquire);
        if HIGH.load(Ordering::Acquire) == high {
            return (u64::from(high) << 32) | u64::from(low);
        }
    }
}

#[exception]
fn SysTick() {
    let low = LOW.load(Ordering::Relaxed).wrapping_add(1);
    if low == 0 {
        HIGH.fetch_add(1, Ordering::Release);
    }
    LOW.store(low, Ordering::Release);
}
