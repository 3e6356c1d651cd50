//! The session table: one DTLS session per (local socket, peer), bounded in number, with
//! handshakes bounded per peer prefix and in total (a reserve kept for peers that
//! authenticated recently), stalled handshakes and idle sessions expired. Records come
//! in and go out; plaintext CoAP datagrams go to and come from the engine unchanged.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use covey_proto::PeerIdentity;
use dimpl::crypto::Dtls12CipherSuite;
use dimpl::{Dtls, DtlsCertificate};

use super::alert;
use super::config::{DtlsConfig, DtlsLimits};
use super::credentials::CredentialsError;
use super::known_peers::KnownPeers;
use super::peer_certificate;
use super::peer_prefix::PeerPrefix;
use super::psk_resolver::KeyResolver;
use super::record;
use super::session::{Outputs, Progress, Session, SessionKey};
use super::stats::{DtlsState, DtlsStats};
use super::trust_anchors::{Purpose, TrustAnchors};

/// The longest gap between two sweeps for idle sessions.
const MAX_SWEEP_INTERVAL: Duration = Duration::from_secs(5);

/// Retransmissions of each flight of a handshake this side opens: with dimpl's first timeout
/// of 1 s, a silent peer is given up after about 15 s, before the handshake timeout.
const CLIENT_FLIGHT_RETRIES: usize = 3;

/// Why a handshake this side opened got no answer, with what the user can check.
const NO_ANSWER: &str = "no answer in time (no coaps server there, or a wrong key or certificate)";

/// A record for the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableTransmit {
    /// The local socket it leaves from.
    pub local: SocketAddr,
    /// The peer.
    pub remote: SocketAddr,
    /// The datagram.
    pub datagram: Vec<u8>,
}

/// How new sessions are made.
struct Roles {
    /// dimpl's configuration for sessions the peer opens (none: this side only connects).
    server: Arc<dimpl::Config>,
    /// dimpl's configuration for sessions this side opens.
    client: Arc<dimpl::Config>,
    certificate: Option<DtlsCertificate>,
    resolver: Option<Arc<KeyResolver>>,
    /// The identity a client presents, which is also what it knows its server by.
    client_identity: Option<String>,
    /// The CAs that vouch for peers' certificate subjects.
    trust_anchors: Option<TrustAnchors>,
}

/// DTLS sessions keyed by (local socket, peer); see the module documentation.
pub struct SessionTable {
    limits: DtlsLimits,
    roles: Roles,
    sessions: HashMap<SessionKey, Session>,
    handshakes: HashMap<SessionKey, Session>,
    /// Addresses that completed a handshake recently: they may use the reserved slots.
    known: KnownPeers,
    outputs: Outputs,
    buf: Vec<u8>,
    stats: DtlsStats,
    next_sweep: Option<Instant>,
    /// Handshakes this side opened that failed: (peer, why), for the requests waiting on them.
    failures: VecDeque<(SocketAddr, String)>,
    /// The wall-clock time at an instant, to check certificates' validity periods at `now`.
    wall_clock: (Instant, SystemTime),
}

impl std::fmt::Debug for SessionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionTable")
            .field("sessions", &self.sessions.len())
            .field("handshakes", &self.handshakes.len())
            .finish_non_exhaustive()
    }
}

impl SessionTable {
    /// A table with no sessions; fails if neither pre-shared keys nor a certificate are given.
    pub fn new(config: DtlsConfig) -> Result<SessionTable, CredentialsError> {
        let rejected = |e: dimpl::Error| CredentialsError::Rejected(e.to_string());
        let provider = dimpl::crypto::rust_crypto::default_provider();
        let base = |require_client_certificate: bool| {
            dimpl::Config::builder()
                .with_crypto_provider(provider.clone())
                .mtu(config.limits.mtu)
                .handshake_timeout(config.limits.handshake_timeout)
                .require_client_certificate(require_client_certificate)
                .use_server_cookie(true)
        };
        let (server, client, certificate, resolver, client_identity) =
            match (&config.certificate, &config.psk) {
                (Some(certified), _) => {
                    let suites = [
                        Dtls12CipherSuite::ECDHE_ECDSA_AES128_GCM_SHA256,
                        Dtls12CipherSuite::ECDHE_ECDSA_AES256_GCM_SHA384,
                        Dtls12CipherSuite::ECDHE_ECDSA_CHACHA20_POLY1305_SHA256,
                    ];
                    let server = base(config.require_client_certificate)
                        .dtls12_cipher_suites(&suites)
                        .build()
                        .map_err(rejected)?;
                    let client = base(false)
                        .flight_retries(CLIENT_FLIGHT_RETRIES)
                        .dtls12_cipher_suites(&suites)
                        .build()
                        .map_err(rejected)?;
                    let certificate = DtlsCertificate {
                        certificate: certified.certificate.clone(),
                        private_key: certified.private_key.clone(),
                    };
                    (server, client, Some(certificate), None, None)
                }
                (None, Some(keys)) => {
                    let suites = [Dtls12CipherSuite::PSK_AES128_CCM_8];
                    let resolver = KeyResolver::new(keys.clone());
                    let server = base(false)
                        .dtls12_cipher_suites(&suites)
                        .with_psk_server(None, resolver.clone())
                        .build()
                        .map_err(rejected)?;
                    let identity = keys.client().0.to_string();
                    let client = base(false)
                        .flight_retries(CLIENT_FLIGHT_RETRIES)
                        .dtls12_cipher_suites(&suites)
                        .with_psk_client(identity.clone().into_bytes(), resolver.clone())
                        .build()
                        .map_err(rejected)?;
                    (server, client, None, Some(resolver), Some(identity))
                }
                (None, None) => {
                    return Err(CredentialsError::Rejected(
                        "DTLS needs pre-shared keys or a certificate".into(),
                    ))
                }
            };
        let mut limits = config.limits;
        // Strangers keep at least half the slots, whatever the bounds.
        limits.reserved_handshakes = limits.reserved_handshakes.min(limits.max_handshakes / 2);
        Ok(SessionTable {
            known: KnownPeers::new(limits.known_peers),
            limits,
            roles: Roles {
                server: Arc::new(server),
                client: Arc::new(client),
                certificate,
                resolver,
                client_identity,
                trust_anchors: config.trust_anchors,
            },
            sessions: HashMap::new(),
            handshakes: HashMap::new(),
            outputs: Outputs::default(),
            // Grown on demand: to the largest record, and to a peer's certificate (within
            // `max_peer_certificate`).
            buf: vec![0; 2048],
            stats: DtlsStats::default(),
            next_sweep: None,
            failures: VecDeque::new(),
            wall_clock: (Instant::now(), SystemTime::now()),
        })
    }

    /// The counters.
    pub fn stats(&self) -> &DtlsStats {
        &self.stats
    }

    /// Sessions, handshakes and counters at once.
    pub fn state(&self) -> DtlsState {
        DtlsState {
            sessions: self.sessions.len(),
            handshakes: self.handshakes.len(),
            stats: self.stats.clone(),
        }
    }

    /// Established sessions.
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Handshakes in progress.
    pub fn handshakes(&self) -> usize {
        self.handshakes.len()
    }

    /// The bounds the table keeps.
    pub fn limits(&self) -> &DtlsLimits {
        &self.limits
    }

    /// Takes a datagram that arrived on `local` from `remote`: records of a session are
    /// decrypted (their plaintext comes out of [`poll_received`](Self::poll_received)), a
    /// ClientHello may open a session, anything else is dropped.
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        local: SocketAddr,
        remote: SocketAddr,
        datagram: &[u8],
    ) {
        let key = SessionKey { local, remote };
        let epoch = record::epoch(datagram);
        let hello = record::is_client_hello(datagram);
        // A new handshake from the address of an established session runs beside it, so a
        // spoofed ClientHello cannot tear the session down; it replaces the session only once
        // it completes.
        if self.handshakes.contains_key(&key) {
            self.drive_handshake(now, key, datagram);
            if epoch == Some(0) || !self.sessions.contains_key(&key) {
                return;
            }
        } else if hello {
            if self.admit(now, key) {
                self.drive_handshake(now, key, datagram);
            }
            return;
        }
        match self.sessions.get_mut(&key) {
            Some(session) => {
                session.last_active = now;
                let result = session
                    .dtls
                    .handle_timeout(now)
                    .and_then(|()| session.dtls.handle_packet(datagram));
                let progress = session.drain(key, &mut self.buf, &mut self.outputs);
                if result.is_err() || progress == Progress::Closed {
                    self.sessions.remove(&key);
                    self.stats.sessions_closed += 1;
                }
            }
            None => self.stats.unknown_datagrams += 1,
        }
    }

    /// Makes room for a handshake a peer opens from `key.remote`, evicting handshakes that
    /// never returned their cookie first; false if there is none. An address that
    /// authenticated recently has a share of its own and may use the reserved slots; others
    /// share by prefix and leave the reserve alone.
    fn make_room(&mut self, key: SessionKey, known: bool) -> bool {
        let share = Share::of(&key, known);
        let in_share = |k: &SessionKey, s: &Session| Share::of(k, s.reserved) == share;
        if self.count(in_share) >= self.limits.max_handshakes_per_prefix
            && !self.evict_unverified(in_share)
        {
            return false;
        }
        let unreserved = |_: &SessionKey, s: &Session| !s.reserved;
        let general = self
            .limits
            .max_handshakes
            .saturating_sub(self.limits.reserved_handshakes);
        if !known && self.count(unreserved) >= general && !self.evict_unverified(unreserved) {
            return false;
        }
        self.has_room()
    }

    /// Whether the total bound leaves room for one more handshake, after evicting one that
    /// never returned its cookie if need be.
    fn has_room(&mut self) -> bool {
        self.handshakes.len() < self.limits.max_handshakes || self.evict_unverified(|_, _| true)
    }

    /// Handshakes for which `filter` holds.
    fn count(&self, filter: impl Fn(&SessionKey, &Session) -> bool) -> usize {
        self.handshakes.iter().filter(|(k, s)| filter(k, s)).count()
    }

    /// Opens a server-side handshake for a ClientHello from `key`, if there is room.
    fn admit(&mut self, now: Instant, key: SessionKey) -> bool {
        let known = self.known.contains(key.remote.ip());
        if !self.make_room(key, known) {
            self.stats.handshakes_refused += 1;
            return false;
        }
        let dtls = match &self.roles.certificate {
            Some(certificate) => Dtls::new_12(self.roles.server.clone(), certificate.clone(), now),
            None => Dtls::new_12_psk(self.roles.server.clone(), now),
        };
        let mut session = Session::new(dtls, false, now);
        session.reserved = known;
        self.handshakes.insert(key, session);
        true
    }

    /// Drops the oldest handshake still waiting for its cookie among those `filter` picks.
    fn evict_unverified(&mut self, filter: impl Fn(&SessionKey, &Session) -> bool) -> bool {
        let oldest = self
            .handshakes
            .iter()
            .filter(|(k, s)| !s.verified && filter(k, s))
            .min_by_key(|(_, s)| s.created)
            .map(|(k, _)| *k);
        match oldest {
            Some(k) => {
                self.handshakes.remove(&k);
                self.stats.unverified_evicted += 1;
                true
            }
            None => false,
        }
    }

    /// Feeds a datagram to the handshake of `key`; fails it instead if the datagram
    /// announces a certificate over the limit.
    fn drive_handshake(&mut self, now: Instant, key: SessionKey, datagram: &[u8]) {
        let Some(session) = self.handshakes.get_mut(&key) else {
            return;
        };
        let certificate = record::largest_certificate(datagram);
        let limit = self.limits.max_peer_certificate;
        if certificate > limit {
            self.stats.certificates_too_large += 1;
            self.fail_handshake(
                key,
                format!("the peer's certificate message of {certificate} bytes is over the limit of {limit}"),
            );
            return;
        }
        session.certificate_room = session.certificate_room.max(certificate);
        let result = session
            .dtls
            .handle_timeout(now)
            .and_then(|()| session.dtls.handle_packet(datagram));
        self.after_handshake_step(now, key, result);
    }

    /// Collects what a handshake step produced; moves a completed handshake to the
    /// established sessions and drops a failed one.
    fn after_handshake_step(
        &mut self,
        now: Instant,
        key: SessionKey,
        result: Result<(), dimpl::Error>,
    ) {
        let Some(session) = self.handshakes.get_mut(&key) else {
            return;
        };
        if let Some(identity) = self.roles.resolver.as_ref().and_then(|r| r.take_resolved()) {
            session.pending_identity = Some(PeerIdentity::Psk(identity));
        }
        let progress = session.drain(key, &mut self.buf, &mut self.outputs);
        if session.verified && session.verified_at.is_none() && !session.opened_here {
            session.verified_at = Some(now);
        }
        if let Err(e) = result {
            if session.opened_here {
                self.fail_handshake(key, client_failure(&e));
            } else {
                // A record that does not decrypt: the client's key is not ours.
                let description = match e {
                    dimpl::Error::CryptoError(_) => alert::DECRYPT_ERROR,
                    dimpl::Error::PskError(_) => alert::UNKNOWN_PSK_IDENTITY,
                    _ => alert::HANDSHAKE_FAILURE,
                };
                self.refuse_handshake(key, description, e.to_string());
            }
            return;
        }
        match progress {
            Progress::Running => {}
            Progress::Closed => self.fail_handshake(key, "the peer closed the session".into()),
            Progress::Connected => {
                let Some(mut session) = self.handshakes.remove(&key) else {
                    return;
                };
                if let Some(der) = session.peer_certificate.take() {
                    session.identity =
                        Some(self.certificate_identity(key, &der, session.opened_here, now));
                }
                if session.identity.is_none() {
                    // This side opened it: the server proved it holds our key.
                    session.identity = self.roles.client_identity.clone().map(PeerIdentity::Psk);
                }
                session.last_active = now;
                self.known.remember(key.remote.ip());
                tracing::debug!(remote = %key.remote, identity = ?session.identity, "DTLS session established");
                // Drained after each record: dimpl holds only a few outgoing records.
                for plaintext in std::mem::take(&mut session.waiting) {
                    if session.dtls.send_application_data(&plaintext).is_err() {
                        break;
                    }
                    session.drain(key, &mut self.buf, &mut self.outputs);
                }
                self.stats.handshakes_completed += 1;
                if self.sessions.len() >= self.limits.max_sessions
                    && !self.sessions.contains_key(&key)
                {
                    self.evict_least_active();
                }
                self.sessions.insert(key, session);
                self.schedule_sweep(now);
            }
        }
    }

    /// Who the peer that presented `der` is: named by subject only if the certificate
    /// validates against the trust anchors at `now`.
    fn certificate_identity(
        &self,
        key: SessionKey,
        der: &[u8],
        opened_here: bool,
        now: Instant,
    ) -> PeerIdentity {
        let purpose = match opened_here {
            true => Purpose::ServerAuth,
            false => Purpose::ClientAuth,
        };
        let verdict = match &self.roles.trust_anchors {
            Some(anchors) => anchors.verify(der, purpose, self.wall_time(now)),
            None => Err("no trust anchors (--ca) to validate it against".into()),
        };
        if let Err(why) = &verdict {
            tracing::debug!(remote = %key.remote, "certificate not validated ({why}): the peer is named by its fingerprint only");
        }
        peer_certificate::identity(der, verdict.is_ok())
    }

    /// The wall-clock time at `now`.
    fn wall_time(&self, now: Instant) -> SystemTime {
        let (instant, system) = self.wall_clock;
        match now.checked_duration_since(instant) {
            Some(later) => system + later,
            None => system - instant.duration_since(now),
        }
    }

    /// Drops a failed handshake, telling the requests waiting for it why.
    fn fail_handshake(&mut self, key: SessionKey, reason: String) {
        tracing::debug!(remote = %key.remote, "DTLS handshake failed: {reason}");
        if let Some(session) = self.handshakes.remove(&key) {
            self.stats.handshakes_failed += 1;
            if session.opened_here {
                self.failures.push_back((key.remote, reason));
            }
        }
    }

    /// Fails a handshake the peer opened, telling a peer that proved its address (returned
    /// the cookie) with a fatal alert, so its client gives up at once and knows why.
    fn refuse_handshake(&mut self, key: SessionKey, description: u8, reason: String) {
        if self.handshakes.get(&key).is_some_and(|s| s.verified) {
            let record = alert::fatal_record(description);
            self.outputs.transmits.push_back((key, record));
        }
        self.fail_handshake(key, reason);
    }

    /// The next handshake this side opened that failed: the peer and why.
    pub fn poll_failure(&mut self) -> Option<(SocketAddr, String)> {
        self.failures.pop_front()
    }

    fn evict_least_active(&mut self) {
        let least = self
            .sessions
            .iter()
            .min_by_key(|(_, s)| s.last_active)
            .map(|(k, _)| *k);
        if let Some(k) = least {
            self.sessions.remove(&k);
            self.stats.sessions_evicted += 1;
        }
    }

    fn schedule_sweep(&mut self, now: Instant) {
        if self.next_sweep.is_none() {
            self.next_sweep = Some(now + self.sweep_interval());
        }
    }

    fn sweep_interval(&self) -> Duration {
        (self.limits.idle_timeout / 4).clamp(Duration::from_millis(10), MAX_SWEEP_INTERVAL)
    }

    /// Sends a plaintext datagram to `remote` from `local`: encrypted on its session, queued
    /// behind a handshake this opens if there is none; false if it had to be dropped.
    pub fn send(
        &mut self,
        now: Instant,
        local: SocketAddr,
        remote: SocketAddr,
        plaintext: &[u8],
    ) -> bool {
        let key = SessionKey { local, remote };
        if let Some(session) = self.sessions.get_mut(&key) {
            session.last_active = now;
            let result = session.dtls.send_application_data(plaintext);
            session.drain(key, &mut self.buf, &mut self.outputs);
            if result.is_err() {
                self.sessions.remove(&key);
                self.stats.sessions_closed += 1;
                return false;
            }
            return true;
        }
        // Only a request (or a ping) opens a session: a response, ACK, RST or notification to
        // a peer whose session is gone has no one waiting for it.
        let waiting = self.handshakes.contains_key(&key)
            || (opens_session(plaintext) && self.connect(now, key));
        if !waiting {
            self.stats.plaintext_dropped += 1;
            return false;
        }
        let max_queued = self.limits.max_queued;
        let Some(session) = self.handshakes.get_mut(&key) else {
            return false;
        };
        if session.waiting.len() >= max_queued {
            self.stats.plaintext_dropped += 1;
            return false;
        }
        session.waiting.push(plaintext.to_vec());
        true
    }

    /// Opens a handshake towards `key.remote` (client role), within the handshake bounds.
    fn connect(&mut self, now: Instant, key: SessionKey) -> bool {
        // This side's own handshakes are bounded only in total: peers cannot open them.
        if !self.has_room() {
            return false;
        }
        let mut dtls = match &self.roles.certificate {
            Some(certificate) => Dtls::new_12(self.roles.client.clone(), certificate.clone(), now),
            None => Dtls::new_12_psk(self.roles.client.clone(), now),
        };
        dtls.set_active(true);
        self.handshakes.insert(key, Session::new(dtls, true, now));
        let result = self
            .handshakes
            .get_mut(&key)
            .map_or(Ok(()), |s| s.dtls.handle_timeout(now));
        self.after_handshake_step(now, key, result);
        self.handshakes.contains_key(&key)
    }

    /// The next plaintext datagram received: (local socket, peer, datagram).
    pub fn poll_received(&mut self) -> Option<(SocketAddr, SocketAddr, Vec<u8>)> {
        let (key, datagram) = self.outputs.received.pop_front()?;
        Some((key.local, key.remote, datagram))
    }

    /// Takes back a datagram buffer from [`poll_received`](Self::poll_received) or
    /// [`poll_transmit`](Self::poll_transmit) once used, to carry a later datagram.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        self.outputs.recycle(buf);
    }

    /// The next record to send.
    pub fn poll_transmit(&mut self) -> Option<TableTransmit> {
        let (key, datagram) = self.outputs.transmits.pop_front()?;
        Some(TableTransmit {
            local: key.local,
            remote: key.remote,
            datagram,
        })
    }

    /// When [`handle_timeout`](Self::handle_timeout) should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let handshakes = self.handshakes.values().map(|s| {
            let deadline = self.deadline(s);
            s.next_timeout.map_or(deadline, |t| t.min(deadline))
        });
        handshakes.chain(self.next_sweep).min()
    }

    /// When the handshake `session` is given up: at the handshake timeout, or sooner once
    /// its peer returned the cookie and then stalled.
    fn deadline(&self, session: &Session) -> Instant {
        let overall = session.created + self.limits.handshake_timeout;
        match session.verified_at {
            Some(at) => overall.min(at + self.limits.stall_timeout),
            None => overall,
        }
    }

    /// Retransmits handshake flights that are due, fails handshakes that took too long, and
    /// closes sessions idle for longer than the idle timeout.
    pub fn handle_timeout(&mut self, now: Instant) {
        let due: Vec<SessionKey> = self
            .handshakes
            .iter()
            .filter(|(_, s)| s.next_timeout.is_some_and(|t| t <= now) || now >= self.deadline(s))
            .map(|(k, _)| *k)
            .collect();
        for key in due {
            let Some(session) = self.handshakes.get_mut(&key) else {
                continue;
            };
            if session
                .verified_at
                .is_some_and(|at| now >= at + self.limits.stall_timeout)
            {
                self.stats.handshakes_stalled += 1;
                self.fail_handshake(key, "the peer stopped after returning its cookie".into());
                continue;
            }
            if now >= session.created + self.limits.handshake_timeout {
                self.fail_handshake(key, NO_ANSWER.into());
                continue;
            }
            let result = session.dtls.handle_timeout(now);
            self.after_handshake_step(now, key, result);
        }
        if self.next_sweep.is_some_and(|t| t <= now) {
            self.sweep(now);
        }
    }

    /// Closes idle sessions (telling the peer with close_notify) and schedules the next sweep.
    fn sweep(&mut self, now: Instant) {
        let idle = self.limits.idle_timeout;
        let expired: Vec<SessionKey> = self
            .sessions
            .iter()
            .filter(|(_, s)| now.saturating_duration_since(s.last_active) >= idle)
            .map(|(k, _)| *k)
            .collect();
        for key in expired {
            if let Some(mut session) = self.sessions.remove(&key) {
                let _ = session.dtls.close();
                session.drain(key, &mut self.buf, &mut self.outputs);
                self.stats.sessions_expired += 1;
            }
        }
        self.next_sweep = (!self.sessions.is_empty()).then(|| now + self.sweep_interval());
    }

    /// Who `remote` proved to be on its session through `local` (any local socket if `None`).
    pub fn peer_identity(
        &self,
        remote: SocketAddr,
        local: Option<SocketAddr>,
    ) -> Option<PeerIdentity> {
        match local {
            Some(local) => self
                .sessions
                .get(&SessionKey { local, remote })?
                .identity
                .clone(),
            None => self
                .sessions
                .iter()
                .find(|(k, _)| k.remote == remote)
                .and_then(|(_, s)| s.identity.clone()),
        }
    }

    /// Closes the session of (`local`, `remote`), telling the peer with close_notify.
    pub fn close(&mut self, local: SocketAddr, remote: SocketAddr) {
        let key = SessionKey { local, remote };
        if let Some(mut session) = self.sessions.remove(&key) {
            let _ = session.dtls.close();
            session.drain(key, &mut self.buf, &mut self.outputs);
        }
        self.handshakes.remove(&key);
    }

    /// Whether the session of (`local`, `remote`) is established.
    pub fn is_established(&self, local: SocketAddr, remote: SocketAddr) -> bool {
        self.sessions.contains_key(&SessionKey { local, remote })
    }

    /// Whether a handshake of (`local`, `remote`) is in progress.
    pub fn is_handshaking(&self, local: SocketAddr, remote: SocketAddr) -> bool {
        self.handshakes.contains_key(&SessionKey { local, remote })
    }
}

/// Whose share of the handshake slots a handshake uses: its peer's prefix, or for an address
/// that authenticated recently (or a handshake this side opened) the address itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Share {
    Prefix(PeerPrefix),
    Address(IpAddr),
}

impl Share {
    fn of(key: &SessionKey, reserved: bool) -> Share {
        match reserved {
            true => Share::Address(key.remote.ip().to_canonical()),
            false => Share::Prefix(PeerPrefix::of(key.remote.ip())),
        }
    }
}

/// Whether a plaintext CoAP datagram may open a session: a request, or a ping (an empty CON).
fn opens_session(plaintext: &[u8]) -> bool {
    const CON: u8 = 0;
    match plaintext {
        [first, code, ..] => {
            let kind = (first >> 4) & 0b11;
            (1..32).contains(code) || (*code == 0 && kind == CON)
        }
        _ => false,
    }
}

/// Why a handshake this side opened failed, in words the user can act on: the meaning of the
/// server's alert, or what a silent server may be.
fn client_failure(e: &dimpl::Error) -> String {
    match e {
        dimpl::Error::SecurityError(dimpl::SecurityError::FatalAlert { description }) => {
            alert::meaning(*description)
        }
        dimpl::Error::Timeout(_) => NO_ANSWER.into(),
        other => format!("{other} (a wrong key or certificate, or no coaps server there)"),
    }
}

#[cfg(test)]
#[path = "session_table_tests.rs"]
mod tests;
