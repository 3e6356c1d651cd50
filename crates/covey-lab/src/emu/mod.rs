//! The emulator: real processes in network namespaces, and the stacks the scenarios run in
//! them.

pub mod stacks;
