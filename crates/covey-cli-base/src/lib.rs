//! What the covey programs share below `covey-cli` and `covey-bench` (which cannot depend on
//! each other: `covey-cli`'s `covey-bench` program runs `covey-bench`'s benchmarks): the DTLS
//! flags, finding the programs installed beside `covey`, and writing to standard output.

pub mod dtls;
pub mod output;
pub mod program;
