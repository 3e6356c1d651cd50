//! What the paper (seeds 000/001, §5.2.2–5.2.5 and §5.3, Figs 10–12 and 14, Table 8) reports
//! of unicast and multicast entities under Wi-Fi interference; the figures are plots, the
//! numbers below are those its text and Table 8 give.

/// Unicast member reliability at 28.5 Mbit/s by G (10, 20, 30), percent.
pub const UNICAST_MEMBER_AT_MAX_PCT: [(usize, f64); 3] = [(10, 100.0), (20, 99.9), (30, 99.5)];

/// Multicast member reliability at 28.5 Mbit/s for G = 30, percent.
pub const MULTICAST_MEMBER_G30_AT_MAX_PCT: f64 = 94.6;

/// Multicast group reliability at 15 Mbit/s for G = 20 and 30, percent ("about 80 %").
pub const MULTICAST_GROUP_AT_15_PCT: f64 = 80.0;

/// Unicast group reliability at 28.5 Mbit/s by G, percent.
pub const UNICAST_GROUP_AT_MAX_PCT: [(usize, f64); 3] = [(10, 100.0), (20, 100.0), (30, 98.0)];

/// Unicast response time without interference by G, seconds ("just above" the inserted
/// delays).
pub const UNICAST_CLEAN_S: [(usize, f64); 3] = [(10, 1.0), (20, 2.0), (30, 3.0)];

/// The multicast leisure, seconds: multicast response times stay below it.
pub const LEISURE_S: f64 = 5.0;

/// One row of Table 8 (office testbed, 10 members, 50 queries).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OfficeRow {
    /// "unicast" or "multicast".
    pub mode: &'static str,
    /// "low" or "normal" usage.
    pub usage: &'static str,
    /// Member reliability, percent.
    pub member_pct: f64,
    /// Group reliability, percent.
    pub group_pct: f64,
    /// Response time min / avg / max, seconds.
    pub response_s: (f64, f64, f64),
}

/// Table 8.
pub const TABLE_8: [OfficeRow; 4] = [
    OfficeRow {
        mode: "unicast",
        usage: "low",
        member_pct: 100.0,
        group_pct: 100.0,
        response_s: (1.02, 1.70, 4.53),
    },
    OfficeRow {
        mode: "unicast",
        usage: "normal",
        member_pct: 100.0,
        group_pct: 100.0,
        response_s: (2.91, 7.21, 13.87),
    },
    OfficeRow {
        mode: "multicast",
        usage: "low",
        member_pct: 92.2,
        group_pct: 64.0,
        response_s: (2.62, 4.92, 8.36),
    },
    OfficeRow {
        mode: "multicast",
        usage: "normal",
        member_pct: 91.2,
        group_pct: 58.0,
        response_s: (2.45, 4.79, 7.75),
    },
];

/// The paper's account of Fig 14.
pub const FIG_14_CLAIM: &str = "Without interference ACK_TIMEOUT makes no difference; under \
     interference 1 s gives lower response times than 2 s, and 0.5 s is worse again: CoAP does \
     not wait long enough for the replies, retransmits meanwhile and causes more collisions.";
