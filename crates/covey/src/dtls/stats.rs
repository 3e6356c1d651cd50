//! Counters of the DTLS session table.

/// What the session table did, since it started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DtlsStats {
    /// Handshakes that completed.
    pub handshakes_completed: u64,
    /// Handshakes that failed (bad key or certificate, protocol error, timeout).
    pub handshakes_failed: u64,
    /// Of the failed handshakes, those whose peer returned the cookie and then stopped
    /// (dropped after the stall timeout).
    pub handshakes_stalled: u64,
    /// Of the failed handshakes, those whose peer sent a Certificate message over
    /// `max_peer_certificate`.
    pub certificates_too_large: u64,
    /// ClientHellos refused because the handshake bounds were reached.
    pub handshakes_refused: u64,
    /// Handshakes still waiting for their cookie, dropped to make room for new ones.
    pub unverified_evicted: u64,
    /// Established sessions dropped to make room (the least recently active).
    pub sessions_evicted: u64,
    /// Established sessions closed after being idle too long.
    pub sessions_expired: u64,
    /// Sessions the peer closed (close_notify) or that failed after being established.
    pub sessions_closed: u64,
    /// Datagrams from peers without a session that do not open a handshake.
    pub unknown_datagrams: u64,
    /// Plaintext datagrams dropped: no session could be started, or too many were waiting
    /// for a handshake.
    pub plaintext_dropped: u64,
}

/// A snapshot of the session table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DtlsState {
    /// Established sessions.
    pub sessions: usize,
    /// Handshakes in progress.
    pub handshakes: usize,
    /// The counters.
    pub stats: DtlsStats,
}
