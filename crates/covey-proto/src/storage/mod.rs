//! Containers bounded by configuration that grow on demand up to their bound and reuse what
//! they hold, so an idle endpoint is small and steady state never allocates.

pub mod buffer_pool;
pub mod datagram_buf;
#[cfg(feature = "hash-tables")]
pub mod digest_table;
pub mod fair_share;
pub mod fifo;
#[cfg(any(test, not(feature = "hash-tables")))]
pub mod linear_map;
pub mod slab;
pub mod timer_layout;
pub mod timer_queue;
