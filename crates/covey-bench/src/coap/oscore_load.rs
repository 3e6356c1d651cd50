//! The security contexts of `covey bench --oscore`: one per generator socket, each with its
//! own Master Secret and kid, so no two sockets share a replay window or a nonce; the
//! server's sides are written as context directories for `covey serve --oscore`.

use std::io;
use std::path::PathBuf;

use covey_oscore::{ContextInput, OscoreError, SecurityContext};

/// The Master Salt of every context (RFC 8613 Appendix C.1's).
const SALT: [u8; 8] = [0x9e, 0x7c, 0xa9, 0x22, 0x23, 0x78, 0x63, 0x40];

/// The most sockets: each needs a kid of its own in two bytes.
pub const MAX_SOCKETS: usize = 1 << 16;

/// The keys of socket `index`: its Master Secret and the client's Sender ID (the server's
/// Recipient ID, the kid of its requests). The server's Sender ID is empty.
fn keys(index: usize) -> ([u8; 16], [u8; 2]) {
    let kid = (index as u16).to_be_bytes();
    let mut secret = *b"covey-bench-key.";
    secret[14..].copy_from_slice(&kid);
    (secret, kid)
}

/// The generator's context for socket `index`.
pub fn client_context(index: usize) -> Result<SecurityContext, OscoreError> {
    let (secret, kid) = keys(index);
    SecurityContext::derive(&ContextInput {
        master_secret: &secret,
        master_salt: &SALT,
        sender_id: &kid,
        recipient_id: &[],
        id_context: None,
    })
}

/// The server's context directories for `count` sockets, removed when dropped.
pub struct ServerContexts {
    root: PathBuf,
    dirs: Vec<PathBuf>,
}

impl ServerContexts {
    /// Writes one directory per socket (aiocoap's `settings.json` layout).
    pub fn write(count: usize) -> io::Result<ServerContexts> {
        let root = std::env::temp_dir().join(format!("covey-bench-oscore-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let mut dirs = Vec::with_capacity(count);
        for index in 0..count {
            let (secret, kid) = keys(index);
            let dir = root.join(index.to_string());
            std::fs::create_dir_all(&dir)?;
            let settings = format!(
                r#"{{"secret_hex": "{}", "salt_hex": "{}", "sender-id_hex": "", "recipient-id_hex": "{}"}}"#,
                hex(&secret),
                hex(&SALT),
                hex(&kid)
            );
            std::fs::write(dir.join("settings.json"), settings)?;
            dirs.push(dir);
        }
        Ok(ServerContexts { root, dirs })
    }

    /// The flags that give them to `covey serve`.
    pub fn serve_flags(&self) -> Vec<String> {
        self.dirs
            .iter()
            .flat_map(|d| ["--oscore".to_string(), d.display().to_string()])
            .collect()
    }
}

impl Drop for ServerContexts {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_socket_has_its_own_secret_and_kid() {
        let (a, b) = (keys(0), keys(1));
        assert_ne!(a.0, b.0);
        assert_ne!(a.1, b.1);
        assert_eq!(keys(0x0102).1, [1, 2]);
        assert_eq!(client_context(3).unwrap().sender_id(), [0, 3]);
    }

    #[test]
    fn the_servers_directories_hold_the_peer_side_and_go_away() {
        let contexts = ServerContexts::write(2).unwrap();
        let flags = contexts.serve_flags();
        assert_eq!(flags.len(), 4);
        let settings =
            std::fs::read_to_string(PathBuf::from(&flags[3]).join("settings.json")).unwrap();
        assert!(
            settings.contains(r#""recipient-id_hex": "0001""#),
            "{settings}"
        );
        let root = contexts.root.clone();
        drop(contexts);
        assert!(!root.exists());
    }
}
