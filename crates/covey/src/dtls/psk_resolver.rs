//! Looking up pre-shared keys for dimpl, remembering which identity a handshake used.

use std::sync::{Arc, Mutex};

use super::credentials::PskKeys;

/// The keys, and the identity of the last successful lookup (dimpl is driven synchronously,
/// so the table reads it right after the call that triggered the lookup).
#[derive(Debug)]
pub(crate) struct KeyResolver {
    keys: PskKeys,
    resolved: Mutex<Option<String>>,
}

impl KeyResolver {
    /// A resolver over `keys`.
    pub fn new(keys: PskKeys) -> Arc<KeyResolver> {
        Arc::new(KeyResolver {
            keys,
            resolved: Mutex::new(None),
        })
    }

    /// The identity resolved since the last call, if any.
    pub fn take_resolved(&self) -> Option<String> {
        self.resolved.lock().ok().and_then(|mut r| r.take())
    }
}

impl dimpl::PskResolver for KeyResolver {
    fn resolve(&self, identity: &[u8]) -> Option<Vec<u8>> {
        let key = self.keys.key(identity)?.to_vec();
        if let (Ok(mut resolved), Ok(identity)) =
            (self.resolved.lock(), std::str::from_utf8(identity))
        {
            *resolved = Some(identity.to_string());
        }
        Some(key)
    }
}
