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
        self.address_validation.trust_socket(socket);
    }

    /// Whether `addr` proved its address, or reached us on a trusted (DTLS) socket: a
    /// verified peer to the tables' second axis of fairness, which Apps may consult too.
    pub fn is_peer_verified(
        &self,
        now: Instant,
        addr: SocketAddr,
        socket: Option<SocketAddr>,
    ) -> bool {
        self.address_validation.is_unlimited(now, addr, socket)
    }

    /// The bytes `remote` may still be sent from the socket being replied from
    /// (`usize::MAX` when unlimited).
    pub(crate) fn remaining_budget(&self, now: Instant, remote: SocketAddr) -> usize {
        let socket = self.local_addr(self.messages.replying_from());
        self.address_validation.remaining(now, remote, socket)
    }

    /// An ACK or RST from `remote` matched a CON sent to it: unless it has guessed wrong too
    /// often, the address is verified (again: its verification is renewed).
    pub(crate) fn acknowledged_by(&mut self, now: Instant, remote: SocketAddr) {
        if self
            .address_validation
            .may_validate_by_acknowledgement(remote)
        {
            self.address_validation.verify(now, remote);
        }
    }
}
