//! Address validation in a build without the `address-validation` feature (a node behind a
//! border router that filters, not exposed): no amplification limit, so every address counts
//! as verified and nothing is counted, challenged or remembered. `Config::validate` refuses
//! an enabled `AmplificationLimit` in this build, so nothing here silently weakens a limit
//! the configuration asked for.

use crate::amplification_limit::AmplificationLimit;
use crate::Instant;
use core::net::SocketAddr;

/// Length of an Echo value (as the full build issues them: a window byte and a 64-bit MAC).
pub(crate) const ECHO_LEN: usize = 9;

/// An Echo option value issued to one address.
pub(crate) type EchoValue = [u8; ECHO_LEN];

/// Validation with no limit: every address is as good as verified.
#[derive(Debug)]
pub(crate) struct AddressValidation;

impl AddressValidation {
    /// Validation without a limit (`Config::validate` saw to `limit` being off).
    pub fn new(_limit: AmplificationLimit, _seed: u64) -> AddressValidation {
        AddressValidation
    }

    /// Nothing to mark: every socket's peers are free of a budget already.
    pub fn trust_socket(&mut self, _socket: SocketAddr) {}

    /// Whether traffic with a peer is free of the budget: always.
    pub fn is_unlimited(
        &self,
        _now: Instant,
        _remote: SocketAddr,
        _socket: Option<SocketAddr>,
    ) -> bool {
        true
    }

    /// Every address counts as verified in the tables' second axis of fairness.
    pub fn verifier(&self, _now: Instant) -> impl Fn(&SocketAddr) -> bool + '_ {
        |_| true
    }

    /// Nothing is counted.
    pub fn earn(
        &mut self,
        _now: Instant,
        _remote: SocketAddr,
        _socket: Option<SocketAddr>,
        _len: usize,
    ) {
    }

    /// The bytes a peer may still be sent: unlimited.
    pub fn remaining(
        &self,
        _now: Instant,
        _remote: SocketAddr,
        _socket: Option<SocketAddr>,
    ) -> usize {
        usize::MAX
    }

    /// Every datagram may go.
    pub fn spend(
        &mut self,
        _now: Instant,
        _destination: SocketAddr,
        _socket: Option<SocketAddr>,
        _size: usize,
    ) -> bool {
        true
    }

    /// Nothing to record.
    pub fn verify(&mut self, _now: Instant, _remote: SocketAddr) {}

    /// No address needs an ACK to verify it, so none is checked that way.
    pub fn may_validate_by_acknowledgement(&self, _remote: SocketAddr) -> bool {
        false
    }

    /// Wrong guesses at message IDs cost nothing here.
    pub fn wrong_guess(&mut self, _remote: SocketAddr) {}

    /// Never asked for, as nobody is challenged: a value [`is_fresh_echo`](Self::is_fresh_echo)
    /// never accepts.
    pub fn echo_value(&self, _now: Instant, _remote: SocketAddr) -> EchoValue {
        [0; ECHO_LEN]
    }

    /// No Echo value was issued, so none is fresh.
    pub fn is_fresh_echo(&self, _now: Instant, _remote: SocketAddr, _value: &[u8]) -> bool {
        false
    }
}
