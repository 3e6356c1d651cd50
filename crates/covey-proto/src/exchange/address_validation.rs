//! The address-validation state (RFC 9175 §2.4, RFC 9000 §8.1): which addresses proved they
//! receive at their address (by Echo, by acknowledging a CON, by a response carrying one of
//! our tokens), the amplification budget of the others, and the local sockets whose peers are
//! trusted already (DTLS, by its cookie exchange). Its fields are private; the endpoint
//! checks the budget as it sends and receives.

use crate::amplification_limit::AmplificationLimit;
use crate::exchange::address_credit::AddressCredit;
use crate::exchange::address_verification::AddressVerification;
pub(crate) use crate::exchange::address_verification::{EchoValue, ECHO_LEN};
use crate::Instant;
use alloc::vec::Vec;
use core::net::SocketAddr;

/// Verified addresses, the others' budgets and the trusted sockets.
#[derive(Debug)]
pub(crate) struct AddressValidation {
    verification: AddressVerification,
    credit: AddressCredit,
    trusted_sockets: Vec<SocketAddr>,
    limit: AmplificationLimit,
}

impl AddressValidation {
    /// Validation under `limit`, its keys and maps seeded from `seed`.
    pub fn new(limit: AmplificationLimit, seed: u64) -> AddressValidation {
        AddressValidation {
            verification: AddressVerification::from_seed(seed),
            // Keyed apart from the engine's stream, so its other draws stay as they were.
            credit: AddressCredit::new(seed.rotate_left(17) ^ 0xC4ED_17AB_0000_0001),
            trusted_sockets: Vec::new(),
            limit,
        }
    }

    /// Marks local socket `socket` as one whose peers have proven their address already.
    pub fn trust_socket(&mut self, socket: SocketAddr) {
        if !self.trusted_sockets.contains(&socket) {
            self.trusted_sockets.push(socket);
        }
    }

    /// Whether traffic with `remote` through local socket `socket` is free of the budget.
    pub fn is_unlimited(
        &self,
        now: Instant,
        remote: SocketAddr,
        socket: Option<SocketAddr>,
    ) -> bool {
        !self.limit.enabled
            || socket.is_some_and(|s| self.trusted_sockets.contains(&s))
            || self.verification.is_verified(now, remote)
    }

    /// Tells addresses that count as verified in the tables' second axis of fairness: they
    /// proved their address (or the limit is off, and everyone counts).
    pub fn verifier(&self, now: Instant) -> impl Fn(&SocketAddr) -> bool + '_ {
        self.verification.verifier(now, self.limit.enabled)
    }

    /// Counts a datagram of `len` bytes received from `remote` on `socket`.
    pub fn earn(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        socket: Option<SocketAddr>,
        len: usize,
    ) {
        if self.is_unlimited(now, remote, socket) {
            return;
        }
        let limit = &self.limit;
        self.credit.received(
            now,
            remote,
            len,
            limit.max_unverified_peers,
            limit.account_lifetime,
        );
    }

    /// The bytes `remote` may still be sent from `socket` (`usize::MAX` when unlimited).
    pub fn remaining(&self, now: Instant, remote: SocketAddr, socket: Option<SocketAddr>) -> usize {
        if self.is_unlimited(now, remote, socket) {
            return usize::MAX;
        }
        self.credit
            .remaining(now, remote, self.limit.factor, self.limit.account_lifetime)
    }

    /// Whether a `size`-byte datagram may go to `destination` from `socket` now; its bytes
    /// are spent when it may.
    pub fn spend(
        &mut self,
        now: Instant,
        destination: SocketAddr,
        socket: Option<SocketAddr>,
        size: usize,
    ) -> bool {
        if self.is_unlimited(now, destination, socket) {
            return true;
        }
        let limit = &self.limit;
        self.credit
            .spend(now, destination, size, limit.factor, limit.account_lifetime)
    }

    /// Records that `remote` showed it receives at its address.
    pub fn verify(&mut self, now: Instant, remote: SocketAddr) {
        if !self.limit.enabled {
            return;
        }
        self.verification.mark_verified(now, remote, &self.limit);
        self.credit.forget(remote);
    }

    /// Whether an ACK or RST from `remote` may still verify it (it has not guessed wrong at
    /// message IDs too often).
    pub fn may_validate_by_acknowledgement(&self, remote: SocketAddr) -> bool {
        self.credit.may_validate_by_acknowledgement(remote)
    }

    /// An ACK or RST from `remote` matched nothing: one wrong guess at a message ID.
    pub fn wrong_guess(&mut self, remote: SocketAddr) {
        self.credit.wrong_guess(remote);
    }

    /// A fresh Echo value for `remote`.
    pub fn echo_value(&self, now: Instant, remote: SocketAddr) -> EchoValue {
        self.verification.echo_value(now, remote, &self.limit)
    }

    /// Whether `value` is an Echo value this endpoint gave `remote` and still fresh.
    pub fn is_fresh_echo(&self, now: Instant, remote: SocketAddr, value: &[u8]) -> bool {
        self.verification.is_fresh(now, remote, value, &self.limit)
    }
}
