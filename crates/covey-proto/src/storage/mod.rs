//! Fixed-capacity containers sized at construction, so steady state never allocates.

pub mod slab;
pub mod timer_queue;
