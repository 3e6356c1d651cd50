//! What the paper (seeds 000/001, §5.2.4, Fig 13) reports of nested entities; the figure is
//! published as a plot.

/// The delay the outer entity inserts between its sub-requests, ms.
pub const SUB_REQUEST_DELAY_MS: u64 = 100;

/// The paper's account of Fig 13.
pub const CLAIM: &str = "At every Wi-Fi load the nested entity of two 10-member entities on \
     two gateways and neighbouring channels answers faster than one 20-member entity, and \
     slower than one 10-member entity (nesting adds processing, the 100 ms between the \
     sub-requests, and a little interference between the neighbouring channels).";
