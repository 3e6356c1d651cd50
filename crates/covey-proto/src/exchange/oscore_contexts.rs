//! The OSCORE security contexts the host added (RFC 8613 §3), found by the kid and kid
//! context of a request, and what binds a response to the request it answers (§5.4).

use crate::storage::slab::SlabKey;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use covey_oscore::{Kid, OscoreOption, PartialIv, RequestId, SecurityContext};

/// Why a security context was not added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddOscoreContextError {
    /// `Config::max_oscore_contexts` contexts are already held.
    Full,
    /// A context with the same Recipient ID and ID Context is already held: requests could
    /// not tell the two apart.
    Duplicate,
}

impl core::fmt::Display for AddOscoreContextError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            AddOscoreContextError::Full => "too many OSCORE security contexts",
            AddOscoreContextError::Duplicate => {
                "an OSCORE context with this recipient ID and ID context is already added"
            }
        })
    }
}

impl core::error::Error for AddOscoreContextError {}

/// A security context added to an endpoint, to protect requests with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OscoreContextId(pub(crate) usize);

/// What a protected request's response is bound to: its context and Partial IV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OscoreBinding {
    /// Index of the context in [`OscoreContexts`]; contexts are never removed.
    pub context: usize,
    pub partial_iv: PartialIv,
    /// Whether the request is known fresh: only then may its response reuse the request's
    /// nonce; otherwise (a challenge after a restart) it is sealed under the server's own
    /// Partial IV (RFC 8613 Appendix B.1.2).
    pub fresh: bool,
    /// The outer Block1 of the last block when the request came in outer blocks
    /// (§4.1.3.4.2): its response carries it.
    pub outer_block1: Option<covey_core::Block>,
}

/// Length of the Echo value a server challenges with after a restart.
pub(crate) const CHALLENGE_LEN: usize = 8;

/// The buffers protecting and verifying reuse, each grown to the largest message it has
/// held (datagrams are bounded by `Config::max_message_size`), so that a protected exchange
/// allocates nothing once they have.
#[derive(Debug, Default)]
pub(crate) struct OscoreBuffers {
    /// A verified message, with room at its end for the plaintext it is decrypted from.
    pub inner: Vec<u8>,
    /// A plain message before it is protected.
    pub plain: Vec<u8>,
    /// A protected message.
    pub sealed: Vec<u8>,
}

/// The first `len` bytes of `buffer`, grown to that length if it is shorter.
pub(crate) fn at_least(buffer: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if buffer.len() < len {
        buffer.resize(len, 0);
    }
    &mut buffer[..len]
}

/// One context an endpoint holds.
#[derive(Debug)]
struct HeldContext {
    context: SecurityContext,
    /// The Echo value a request must carry to prove its freshness while the context's
    /// replay window is lost (RFC 8613 Appendix B.1.2); `None` for a context that only
    /// protects requests this endpoint sends, which verifies no request.
    challenge: Option<[u8; CHALLENGE_LEN]>,
    /// When it last verified a request, in [`OscoreContexts::stamp`] order.
    last_verified: u64,
}

/// The security contexts, at most `max` of them.
#[derive(Debug)]
pub(crate) struct OscoreContexts {
    held: Vec<HeldContext>,
    max: usize,
    /// Taken out while in use, so the endpoint stays free to borrow.
    pub buffers: OscoreBuffers,
    /// What each protected observation's notifications are bound to, by observer (at most
    /// `Config::max_observers` of them).
    pub observations: BTreeMap<SlabKey, OscoreBinding>,
    /// Counts verified requests, to tell which context was used least recently.
    stamp: u64,
}

impl OscoreContexts {
    pub fn new(max: usize) -> OscoreContexts {
        OscoreContexts {
            held: Vec::new(),
            max,
            buffers: OscoreBuffers::default(),
            observations: BTreeMap::new(),
            stamp: 0,
        }
    }

    /// Adds `context`. With a `challenge` (the Echo value for when its replay window is
    /// lost) requests are verified with it; without, it only protects requests this
    /// endpoint sends, and several such may share a Recipient ID.
    pub fn add(
        &mut self,
        context: SecurityContext,
        challenge: Option<[u8; CHALLENGE_LEN]>,
    ) -> Result<OscoreContextId, AddOscoreContextError> {
        let duplicate = challenge.is_some()
            && self.serving().any(|h| {
                h.context.recipient_id() == context.recipient_id()
                    && h.context.id_context() == context.id_context()
            });
        if duplicate {
            return Err(AddOscoreContextError::Duplicate);
        }
        if self.held.len() >= self.max {
            return Err(AddOscoreContextError::Full);
        }
        self.stamp += 1;
        self.held.push(HeldContext {
            context,
            challenge,
            last_verified: self.stamp,
        });
        Ok(OscoreContextId(self.held.len() - 1))
    }

    /// Puts `context` in the place of context `index`, which requests are then verified
    /// with; what was bound to the old one (its observations) is the caller's to end.
    #[cfg(feature = "edhoc")]
    pub fn replace(
        &mut self,
        index: usize,
        context: SecurityContext,
        challenge: [u8; CHALLENGE_LEN],
    ) {
        self.stamp += 1;
        if let Some(held) = self.held.get_mut(index) {
            *held = HeldContext {
                context,
                challenge: Some(challenge),
                last_verified: self.stamp,
            };
        }
    }

    /// Notes that context `index` verified a request.
    /// Puts `context` in the place of sending-only context `index`; false if `index` is
    /// not one.
    pub fn replace_sending(&mut self, index: usize, context: SecurityContext) -> bool {
        match self.held.get_mut(index) {
            Some(held) if held.challenge.is_none() => {
                held.context = context;
                true
            }
            _ => false,
        }
    }

    pub fn mark_verified(&mut self, index: usize) {
        self.stamp += 1;
        if let Some(held) = self.held.get_mut(index) {
            held.last_verified = self.stamp;
        }
    }

    /// Of the serving contexts `chosen` picks, the one that verified a request least
    /// recently.
    #[cfg(feature = "edhoc")]
    pub fn least_recent(&self, chosen: impl Fn(&SecurityContext) -> bool) -> Option<usize> {
        (0..self.held.len())
            .filter(|&i| self.held[i].challenge.is_some() && chosen(&self.held[i].context))
            .min_by_key(|&i| self.held[i].last_verified)
    }

    /// When the serving context with Recipient ID `id` that `chosen` picks last verified a
    /// request, in stamp order (older is lower).
    #[cfg(feature = "edhoc")]
    pub fn last_verified(
        &self,
        id: &[u8],
        chosen: impl Fn(&SecurityContext) -> bool,
    ) -> Option<u64> {
        self.held
            .iter()
            .find(|h| h.challenge.is_some() && h.context.recipient_id() == id && chosen(&h.context))
            .map(|h| h.last_verified)
    }

    /// The serving context whose Recipient ID is `id` (and no ID Context).
    #[cfg(feature = "edhoc")]
    pub fn serving_with(&self, id: &[u8]) -> Option<usize> {
        self.held.iter().position(|h| {
            h.challenge.is_some()
                && h.context.recipient_id() == id
                && h.context.id_context().is_none()
        })
    }

    /// Whether no more contexts may be added.
    #[cfg(feature = "edhoc")]
    pub fn is_full(&self) -> bool {
        self.held.len() >= self.max
    }

    /// The context a request's OSCORE option names: its kid is the Recipient ID, and its
    /// kid context, when sent, the ID Context (RFC 8613 §8.2 step 2).
    pub fn find(&self, option: &OscoreOption<'_>) -> Option<usize> {
        let kid = option.kid?;
        self.held.iter().position(|h| {
            h.challenge.is_some()
                && h.context.recipient_id() == kid
                && option
                    .kid_context
                    .is_none_or(|k| h.context.id_context() == Some(k))
        })
    }

    /// The contexts requests are verified with.
    fn serving(&self) -> impl Iterator<Item = &HeldContext> {
        self.held.iter().filter(|h| h.challenge.is_some())
    }

    /// The Echo value of context `index`'s challenges.
    pub fn challenge(&self, index: usize) -> Option<[u8; CHALLENGE_LEN]> {
        self.held.get(index)?.challenge
    }

    pub fn get(&self, index: usize) -> Option<&SecurityContext> {
        self.held.get(index).map(|h| &h.context)
    }

    pub fn get_mut(&mut self, index: usize) -> Option<&mut SecurityContext> {
        self.held.get_mut(index).map(|h| &mut h.context)
    }

    /// The request identity a response under `binding` is sealed with.
    pub fn request_id(&self, binding: OscoreBinding) -> Option<RequestId> {
        let context = self.get(binding.context)?;
        Some(RequestId {
            kid: Kid::new(context.recipient_id()).ok()?,
            partial_iv: binding.partial_iv,
        })
    }
}
