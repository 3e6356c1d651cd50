//! One DTLS session with one peer: dimpl's state machine plus what the table needs to bound
//! and route it.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Instant;

use covey_proto::PeerIdentity;
use dimpl::{Dtls, Output};

use super::record;

/// Which socket and which peer a session belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct SessionKey {
    /// The local socket's address.
    pub local: SocketAddr,
    /// The peer's address.
    pub remote: SocketAddr,
}

/// How many emptied datagram buffers [`Outputs`] keeps for reuse: enough for a receive or
/// send batch, so a steady stream copies into warm buffers instead of allocating.
const SPARE_BUFFERS: usize = 64;

/// A record to send, a plaintext received: what the table collects from its sessions.
#[derive(Debug, Default)]
pub(crate) struct Outputs {
    /// Records to send, with the session they belong to.
    pub transmits: VecDeque<(SessionKey, Vec<u8>)>,
    /// Plaintext datagrams received, with the session they came through.
    pub received: VecDeque<(SessionKey, Vec<u8>)>,
    /// Buffers handed back by the caller, to carry the next datagrams.
    spare: Vec<Vec<u8>>,
}

impl Outputs {
    /// `bytes` in a spare buffer when there is one.
    fn copy_of(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(bytes);
        buf
    }

    /// Keeps `buf` for a later datagram (up to [`SPARE_BUFFERS`]).
    pub fn recycle(&mut self, buf: Vec<u8>) {
        if self.spare.len() < SPARE_BUFFERS {
            self.spare.push(buf);
        }
    }
}

/// What became of a session after it was driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Still going.
    Running,
    /// The handshake completed in this step.
    Connected,
    /// The peer closed the session.
    Closed,
}

/// A DTLS session.
pub(crate) struct Session {
    pub dtls: Dtls,
    /// Whether the handshake is over.
    pub established: bool,
    /// Whether this side opened the session (the client role).
    pub opened_here: bool,
    /// Whether the peer has shown it receives at its address: it returned the server's cookie
    /// (always true for sessions this side opened).
    pub verified: bool,
    /// When the peer returned the cookie (sessions the peer opened), for the stall timeout.
    pub verified_at: Option<Instant>,
    /// Whether the handshake may use the reserved slots: its peer authenticated recently,
    /// or this side opened it.
    pub reserved: bool,
    /// Who the peer proved to be, once established.
    pub identity: Option<PeerIdentity>,
    /// The identity learnt during the handshake, kept until it completes.
    pub pending_identity: Option<PeerIdentity>,
    /// The certificate (DER) the peer presented, named once the handshake completes.
    pub peer_certificate: Option<Vec<u8>>,
    /// The largest Certificate message the peer announced (within the table's limit): the
    /// room dimpl needs to hand its certificate back.
    pub certificate_room: usize,
    /// When the session was created.
    pub created: Instant,
    /// When a record last came from the peer or went to it.
    pub last_active: Instant,
    /// When dimpl next wants `handle_timeout`.
    pub next_timeout: Option<Instant>,
    /// Plaintext datagrams waiting for the handshake to complete.
    pub waiting: Vec<Vec<u8>>,
}

impl Session {
    /// A session around a fresh dimpl state machine.
    pub fn new(dtls: Dtls, opened_here: bool, now: Instant) -> Session {
        Session {
            dtls,
            established: false,
            opened_here,
            verified: opened_here,
            verified_at: None,
            reserved: opened_here,
            identity: None,
            pending_identity: None,
            peer_certificate: None,
            certificate_room: 0,
            created: now,
            last_active: now,
            next_timeout: None,
            waiting: Vec::new(),
        }
    }

    /// Drains dimpl's output into `out` (records to send, plaintext received), growing `buf`
    /// when a record needs more room, and beforehand to hold the peer's certificate: dimpl
    /// panics instead of asking for more when that does not fit.
    pub fn drain(&mut self, key: SessionKey, buf: &mut Vec<u8>, out: &mut Outputs) -> Progress {
        if buf.len() < self.certificate_room {
            buf.resize(self.certificate_room, 0);
        }
        let mut progress = Progress::Running;
        loop {
            match self.dtls.poll_output(buf) {
                Output::Packet(p) => {
                    if !self.verified && record::is_server_hello(p) {
                        self.verified = true;
                    }
                    let record = out.copy_of(p);
                    out.transmits.push_back((key, record));
                }
                Output::BufferTooSmall { needed } => buf.resize(needed, 0),
                Output::Timeout(at) => {
                    self.next_timeout = Some(at);
                    break;
                }
                Output::Connected => {
                    self.established = true;
                    self.identity = self.pending_identity.take();
                    progress = Progress::Connected;
                }
                Output::PeerCert(der) => self.peer_certificate = Some(der.to_vec()),
                Output::ApplicationData(data) => {
                    let plaintext = out.copy_of(data);
                    out.received.push_back((key, plaintext));
                }
                Output::CloseNotify => progress = Progress::Closed,
                _ => {}
            }
        }
        progress
    }
}
