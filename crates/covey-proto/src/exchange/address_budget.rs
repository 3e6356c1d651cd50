//! The amplification budget at work (RFC 9175 §2.4, RFC 9000 §8.1): every datagram from an
//! unverified address earns it `factor` times its size, every datagram to it spends, and
//! `poll_transmit` holds back whatever does not fit, whoever made it (responses, their
//! retransmissions, notifications, the engine's own error replies). An address is verified
//! by echoing an Echo value, by acknowledging or rejecting a CON sent to it (the message ID
//! is not seen off path), or by a response carrying one of our tokens; traffic on a trusted
//! (DTLS) socket is exempt, its peers having passed the cookie exchange.

use crate::endpoint::Endpoint;
use crate::Instant;
use core::net::SocketAddr;

impl Endpoint {
    /// Marks local socket `socket` as one whose peers have proven their address already (a
    /// DTLS socket, by its cookie exchange): the amplification budget does not apply to it.
    pub fn trust_socket(&mut self, socket: SocketAddr) {
        if !self.trusted_sockets.contains(&socket) {
            self.trusted_sockets.push(socket);
        }
    }

    /// Whether traffic with `remote` through local socket `socket` is free of the budget.
    pub(crate) fn is_unlimited(
        &self,
        now: Instant,
        remote: SocketAddr,
        socket: Option<SocketAddr>,
    ) -> bool {
        !self.config.amplification.enabled
            || socket.is_some_and(|s| self.trusted_sockets.contains(&s))
            || self.address_verification.is_verified(now, remote)
    }

    /// Whether `addr` counts as verified in the tables' second axis of fairness: it proved
    /// its address (or the limit is off, and everyone counts).
    pub(crate) fn counts_as_verified(&self, now: Instant, addr: &SocketAddr) -> bool {
        let limited = self.config.amplification.enabled;
        self.address_verification.verifier(now, limited)(addr)
    }

    /// Whether `addr` proved its address, or reached us on a trusted (DTLS) socket: a
    /// verified peer to the tables' second axis of fairness, which Apps may consult too.
    pub fn is_peer_verified(
        &self,
        now: Instant,
        addr: SocketAddr,
        socket: Option<SocketAddr>,
    ) -> bool {
        self.is_unlimited(now, addr, socket)
    }

    /// Counts a datagram of `len` bytes received from `remote` on `socket`.
    pub(crate) fn earn_budget(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        socket: Option<SocketAddr>,
        len: usize,
    ) {
        if self.is_unlimited(now, remote, socket) {
            return;
        }
        let limit = &self.config.amplification;
        self.address_credit.received(
            now,
            remote,
            len,
            limit.max_unverified_peers,
            limit.account_lifetime,
        );
    }

    /// The bytes `remote` may still be sent from the socket being replied from
    /// (`usize::MAX` when unlimited).
    pub(crate) fn remaining_budget(&self, now: Instant, remote: SocketAddr) -> usize {
        if self.is_unlimited(now, remote, self.local_addr(self.messages.replying_from())) {
            return usize::MAX;
        }
        let limit = &self.config.amplification;
        self.address_credit
            .remaining(now, remote, limit.factor, limit.account_lifetime)
    }

    /// Whether a `size`-byte datagram may go to `destination` from `socket` now; its bytes
    /// are spent when it may.
    pub(crate) fn spend_budget(
        &mut self,
        now: Instant,
        destination: SocketAddr,
        socket: Option<SocketAddr>,
        size: usize,
    ) -> bool {
        if self.is_unlimited(now, destination, socket) {
            return true;
        }
        let limit = &self.config.amplification;
        self.address_credit
            .spend(now, destination, size, limit.factor, limit.account_lifetime)
    }

    /// Records that `remote` showed it receives at its address.
    pub(crate) fn verify_address(&mut self, now: Instant, remote: SocketAddr) {
        if !self.config.amplification.enabled {
            return;
        }
        self.address_verification
            .mark_verified(now, remote, &self.config.amplification);
        self.address_credit.forget(remote);
    }

    /// An ACK or RST from `remote` matched a CON sent to it: unless it has guessed wrong too
    /// often, the address is verified (again: its verification is renewed).
    pub(crate) fn acknowledged_by(&mut self, now: Instant, remote: SocketAddr) {
        if self.address_credit.may_validate_by_acknowledgement(remote) {
            self.verify_address(now, remote);
        }
    }

    /// An ACK or RST from `remote` matched nothing: one wrong guess at a message ID.
    pub(crate) fn unmatched_acknowledgement(&mut self, remote: SocketAddr) {
        self.address_credit.wrong_guess(remote);
    }
}
