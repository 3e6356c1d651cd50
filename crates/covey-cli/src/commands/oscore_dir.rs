//! An OSCORE security context directory in aiocoap's layout, as `--oscore DIR` names it:
//! `settings.json` and `secret.json`, whose keys are merged; a key ending in `_hex` holds hex,
//! one ending in `_ascii` text (`sender-id`, `recipient-id`, `secret`, optional `salt` and
//! `id-context`), besides `algorithm`, `kdf-hashfun` and `window`. A client or server keeps its
//! next sequence number in `sequence.json` there (`next-to-send`), as aiocoap does, so a
//! second run never reuses a nonce.

use std::collections::BTreeMap;
use std::path::Path;

use covey_oscore::{ContextInput, SecurityContext};
use serde_json::Value;

/// The only AEAD and hash covey-oscore implements, by the names aiocoap gives them.
const ALGORITHM: &str = "AES-CCM-16-64-128";
const KDF_HASH: &str = "sha256";
/// covey-oscore's replay window, in sequence numbers.
const WINDOW: u64 = 32;

/// Reads the directory and derives its context; the error says what is wrong, in one line.
pub fn load(dir: &Path) -> Result<SecurityContext, String> {
    with_input(dir, "--oscore", |input| {
        SecurityContext::derive(input).map_err(|e| e.to_string())
    })
}

/// The EM's side of a member's context as an entity document carries it (`covey entity
/// create --member-oscore URI=DIR`): the directory's values, checked.
pub fn member_context(dir: &Path) -> Result<covey_group::MemberContext, String> {
    with_input(dir, "--member-oscore", |input| {
        SecurityContext::derive(input).map_err(|e| e.to_string())?;
        Ok(covey_group::MemberContext::new(input))
    })
}

/// Reads the directory and hands its values to `make`; an error is one line naming `option`
/// and the directory.
fn with_input<T>(
    dir: &Path,
    option: &str,
    make: impl FnOnce(&ContextInput<'_>) -> Result<T, String>,
) -> Result<T, String> {
    let fail = |why: String| format!("{option} {}: {why}", dir.display());
    let data = read_merged(dir).map_err(fail)?;
    let bytes = |key: &str| data.get(key).map(Vec::as_slice);
    let required = |key: &str| bytes(key).ok_or_else(|| fail(format!("no {key}_hex")));
    let input = ContextInput {
        master_secret: required("secret")?,
        master_salt: bytes("salt").unwrap_or_default(),
        sender_id: required("sender-id")?,
        recipient_id: required("recipient-id")?,
        id_context: bytes("id-context"),
    };
    make(&input).map_err(fail)
}

/// Sequence numbers a client reserves per run besides one per block it may send: the
/// request, its repeat with Echo, an observation's cancellation, with room to spare.
const RESERVED: u64 = 16;

/// Sequence numbers a server reserves per start, for the responses it seals under its own
/// Partial IV (a challenge after the restart per client), and a gateway for its requests to
/// one member: 2^20 per start leaves 2^20 starts in the 2^40 numbers of a context.
const SERVICE_RESERVED: u64 = 1 << 20;

/// [`load`] for a client that sends at most `blocks` block-wise requests (each protected
/// under its own sequence number): its sender sequence number resumes from
/// `sequence.json`, which is advanced past this run's numbers before any is used.
pub fn load_for_sending(dir: &Path, blocks: u64) -> Result<SecurityContext, String> {
    load_reserving(dir, RESERVED + blocks)
}

/// [`load`] for a server: sequence numbers reserved as for a client, and the replay window
/// lost, as it is not kept across starts; each client's first request is then answered with
/// an Echo challenge before anything is served (RFC 8613 Appendix B.1.2), so a request
/// recorded before the restart cannot be replayed.
pub fn load_for_serving(dir: &Path) -> Result<SecurityContext, String> {
    let mut context = load_reserving(dir, SERVICE_RESERVED)?;
    context.forget_replay_window();
    Ok(context)
}

/// [`load`] for a long-running client (the gateway asking a member): 2^20 sequence numbers
/// reserved per start; past them its requests to that member fail until a restart reserves
/// more, rather than reuse a number.
pub fn load_for_service(dir: &Path) -> Result<SecurityContext, String> {
    load_reserving(dir, SERVICE_RESERVED)
}

/// [`load`] with the next `reserved` sequence numbers taken from `sequence.json`; the
/// context stops before the end of them.
fn load_reserving(dir: &Path, reserved: u64) -> Result<SecurityContext, String> {
    let mut context = load(dir)?;
    let fail = |why: String| format!("--oscore {}: {why}", dir.display());
    let next = match read_sequence(dir).map_err(fail)?.get("next-to-send") {
        None => 0,
        Some(v) => v
            .as_u64()
            .ok_or_else(|| fail("next-to-send in sequence.json is no number".into()))?,
    };
    context
        .set_sender_sequence_number(next)
        .map_err(|e| fail(e.to_string()))?;
    context.set_sender_sequence_limit(next + reserved);
    store_next_to_send(dir, next + reserved).map_err(fail)?;
    Ok(context)
}

/// Keeps the sequence numbers of a context loaded with [`load_for_serving`] or
/// [`load_for_service`] reserved ahead while it runs: once half a reservation is used, the
/// next one is stored as taken in `sequence.json` before the context may use it, so a
/// server that sends many notifications (each under its own number) never stops for want
/// of them. A failed write is logged and tried again a while later; meanwhile the context
/// goes on to the end of what it has.
pub fn keep_reserving(dir: &Path) -> covey::SequenceReservation {
    let dir = dir.to_path_buf();
    let mut retry_from = 0;
    Box::new(move |next, limit| {
        if next < retry_from {
            return None;
        }
        let new_limit = covey_oscore::next_reservation(next, limit, SERVICE_RESERVED)?;
        match store_next_to_send(&dir, new_limit) {
            Ok(()) => Some(new_limit),
            Err(e) => {
                tracing::error!(
                    "OSCORE {}: {e}; sequence numbers not reserved",
                    dir.display()
                );
                retry_from = next + RETRY_AFTER;
                None
            }
        }
    })
}

/// Sequence numbers a running context uses before it tries a failed reservation again.
const RETRY_AFTER: u64 = 4096;

/// The object in `sequence.json`, empty when there is none.
fn read_sequence(dir: &Path) -> Result<serde_json::Map<String, Value>, String> {
    match std::fs::read_to_string(dir.join("sequence.json")) {
        Ok(text) => {
            serde_json::from_str(&text).map_err(|e| format!("sequence.json is no JSON object: {e}"))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(serde_json::Map::new()),
        Err(e) => Err(format!("cannot read sequence.json: {e}")),
    }
}

/// Stores `next` as the next sequence number to send in `sequence.json`, keeping its
/// other keys.
fn store_next_to_send(dir: &Path, next: u64) -> Result<(), String> {
    let mut sequence = read_sequence(dir)?;
    sequence.insert("next-to-send".into(), Value::from(next));
    // aiocoap reads it too; it recovers an unknown replay window with Echo.
    sequence
        .entry("received")
        .or_insert_with(|| Value::from("unknown"));
    let text = Value::Object(sequence).to_string();
    // Written whole under another name, then renamed: a crash leaves the old or the new.
    let temporary = dir.join(".sequence-covey.json");
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, dir.join("sequence.json")))
        .map_err(|e| format!("cannot write sequence.json: {e}"))
}

/// The byte strings of both files by key without their suffix, after checking the others.
fn read_merged(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut data = BTreeMap::new();
    let mut found = false;
    for file in ["secret.json", "settings.json"] {
        let path = dir.join(file);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("cannot read {file}: {e}")),
        };
        found = true;
        let object: serde_json::Map<String, Value> =
            serde_json::from_str(&text).map_err(|e| format!("{file} is no JSON object: {e}"))?;
        for (key, value) in object {
            let (name, bytes) = decode(&key, &value).map_err(|e| format!("{file}: {e}"))?;
            let Some(bytes) = bytes else { continue };
            if data.insert(name.clone(), bytes).is_some() {
                return Err(format!("{name} is given twice"));
            }
        }
    }
    if !found {
        return Err("neither settings.json nor secret.json is there".into());
    }
    Ok(data)
}

/// The name and bytes of one entry; `None` bytes for a setting checked here.
fn decode(key: &str, value: &Value) -> Result<(String, Option<Vec<u8>>), String> {
    let text = || {
        value
            .as_str()
            .ok_or_else(|| format!("{key} must be a string"))
    };
    if let Some(name) = key.strip_suffix("_hex") {
        let bytes = covey_group::decode_hex(text()?).ok_or_else(|| format!("{key} is not hex"))?;
        return Ok((name.into(), Some(bytes)));
    }
    if let Some(name) = key.strip_suffix("_ascii") {
        return Ok((name.into(), Some(text()?.as_bytes().to_vec())));
    }
    match key {
        "algorithm" if text()? != ALGORITHM => Err(format!(
            "algorithm {:?} is not supported (only {ALGORITHM})",
            text()?
        )),
        "kdf-hashfun" if text()? != KDF_HASH => Err(format!(
            "kdf-hashfun {:?} is not supported (only {KDF_HASH})",
            text()?
        )),
        "window" if value.as_u64() != Some(WINDOW) => {
            Err(format!("window {value} is not supported (only {WINDOW})"))
        }
        // Other keys (aiocoap's own) do not change the context.
        _ => Ok((key.into(), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(name: &str, settings: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("covey-oscore-dir-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), settings).unwrap();
        dir
    }

    /// A running server reserves the next 2^20 numbers in sequence.json once half of its
    /// reservation is used, and only then; a restart resumes above what it reserved.
    #[test]
    fn a_running_context_reserves_more_before_it_runs_out() {
        let dir = dir_with(
            "reserving",
            r#"{"sender-id_hex": "01", "recipient-id_hex": "", "secret_hex": "0102"}"#,
        );
        let context = load_for_serving(&dir).unwrap();
        let limit = context.sender_sequence_limit();
        assert_eq!(limit, SERVICE_RESERVED);
        let mut reserve = keep_reserving(&dir);
        assert_eq!(reserve(10, limit), None, "plenty left");
        assert_eq!(
            reserve(SERVICE_RESERVED / 2 + 1, limit),
            Some(2 * SERVICE_RESERVED)
        );
        let stored = read_sequence(&dir).unwrap();
        assert_eq!(stored["next-to-send"], 2 * SERVICE_RESERVED);
        assert_eq!(stored["received"], "unknown", "aiocoap's key is kept");
        let restarted = load_for_serving(&dir).unwrap();
        assert_eq!(restarted.sender_sequence_number(), 2 * SERVICE_RESERVED);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_directory_in_aiocoaps_layout_gives_its_context() {
        let dir = dir_with(
            "good",
            r#"{"sender-id_hex": "01", "recipient-id_ascii": "c", "algorithm": "AES-CCM-16-64-128"}"#,
        );
        std::fs::write(
            dir.join("secret.json"),
            r#"{"secret_hex": "0102", "salt_hex": ""}"#,
        )
        .unwrap();
        let context = load(&dir).unwrap();
        assert_eq!(context.sender_id(), [1]);
        assert_eq!(context.recipient_id(), b"c");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_client_never_starts_twice_from_the_same_sequence_number() {
        let dir = dir_with(
            "sequence",
            r#"{"secret_hex": "01", "sender-id_hex": "", "recipient-id_hex": "01"}"#,
        );
        let first = load_for_sending(&dir, 0).unwrap().sender_sequence_number();
        let second = load_for_sending(&dir, 0).unwrap().sender_sequence_number();
        assert_eq!((first, second), (0, RESERVED));
        let kept = std::fs::read_to_string(dir.join("sequence.json")).unwrap();
        assert!(kept.contains(r#""received":"unknown""#), "{kept}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_bad_directory_gets_one_line_saying_why() {
        for (name, settings, why) in [
            (
                "nosecret",
                r#"{"sender-id_hex": "", "recipient-id_hex": "01"}"#,
                "no secret_hex",
            ),
            ("badhex", r#"{"secret_hex": "0g"}"#, "secret_hex is not hex"),
            (
                "alg",
                r#"{"algorithm": "AES-CCM-16-128-128"}"#,
                "not supported",
            ),
            ("json", "[1, 2]", "no JSON object"),
            (
                "longid",
                r#"{"secret_hex": "01", "sender-id_hex": "0102030405060708", "recipient-id_hex": ""}"#,
                "longer than 7 bytes",
            ),
        ] {
            let dir = dir_with(name, settings);
            let error = load(&dir).unwrap_err();
            assert!(
                error.contains(why) && !error.contains('\n'),
                "{name}: {error}"
            );
            let _ = std::fs::remove_dir_all(&dir);
        }
        let missing = load(Path::new("/nonexistent/oscore")).unwrap_err();
        assert!(
            missing.contains("neither settings.json nor secret.json"),
            "{missing}"
        );
    }
}
