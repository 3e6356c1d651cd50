//! What the TinyCoAP paper (seed 002, §6.4, Fig 9) says of the server workload; the figure
//! itself is published only as a plot.

/// The rate above which the paper's answered share drops sharply, requests/s.
pub const KNEE_RATE: f64 = 80.0;

/// The rate above which the paper's curve flattens, requests/s.
pub const FLATTENING_RATE: f64 = 150.0;

/// The paper's estimate of CSMA-CA plus turnaround per frame (its reference [48]), seconds.
pub const PAPER_FRAME_TIME_S: f64 = 6.09e-3;

/// The paper's account of Fig 9.
pub const FIG_9_CLAIM: &str = "Above about 80 requests/s the share of requests the server \
     answers (TinyCoAP, HTTP/UDP) drops sharply: a transaction's latency becomes comparable to \
     the sending interval and requests collide with responses. From about 150 requests/s the \
     drop is less sharp: the sender's buffer saturates (CSMA-CA plus turnaround is about \
     6.09 ms per frame), many requests never leave the node, and the number sent correctly \
     becomes stable.";
