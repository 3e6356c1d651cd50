//! Robustness (OSCORE): hand-made protected requests at `covey serve --oscore -v` over
//! loopback. Truncated and corrupt OSCORE options and ciphertexts, unknown kids, a kid
//! context the server does not have, a Partial IV longer than five bytes and a replay flood
//! each get the error RFC 8613 §8.2 names, unprotected with its diagnostic and Max-Age 0, and a
//! log line saying why; none of them moves the replay window, and the server goes on serving.
//! A server just started has lost its replay window: a request recorded before the restart
//! earns only an Echo challenge (Appendix B.1.2).

mod raw_client;
mod support;

use std::path::PathBuf;

use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_oscore::{ContextInput, RequestId, SecurityContext};
use raw_client::{Answer, Raw};
use support::{covey_server, Background};

/// The client's context of RFC 8613 Appendix C.1.1 (Sender ID empty).
const CLIENT: ContextInput<'static> = ContextInput {
    master_secret: &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
    master_salt: &[0x9e, 0x7c, 0xa9, 0x22, 0x23, 0x78, 0x63, 0x40],
    sender_id: &[],
    recipient_id: &[0x01],
    id_context: None,
};

/// How many copies of one request the replay flood sends.
const FLOOD: usize = 2_000;
/// How many of them are in flight at once.
const BURST: usize = 50;

/// `covey serve -v` with the server's side of [`CLIENT`] (Appendix C.1.2) in aiocoap's
/// directory layout; the directory is removed when dropped.
struct OscoreServer {
    process: Background,
    port: u16,
    dir: PathBuf,
}

impl OscoreServer {
    fn start(name: &str) -> OscoreServer {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("robustness-oscore-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the context directory");
        // Sender ID 01, Recipient ID empty: the server's side of CLIENT.
        std::fs::write(
            dir.join("settings.json"),
            r#"{"secret_hex": "0102030405060708090a0b0c0d0e0f10", "salt_hex": "9e7ca92223786340",
                "sender-id_hex": "01", "recipient-id_hex": ""}"#,
        )
        .expect("write settings.json");
        let (process, port) = covey_server(&["--oscore", dir.to_str().unwrap(), "-v"]);
        OscoreServer { process, port, dir }
    }
}

impl OscoreServer {
    /// Stops it and starts it again on the same context directory (a new port).
    fn restart(&mut self) {
        let (process, port) = covey_server(&["--oscore", self.dir.to_str().unwrap(), "-v"]);
        self.process = process;
        self.port = port;
    }
}

impl Drop for OscoreServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A confirmable GET of /time with message ID `mid`.
fn get_time(mid: u16) -> Vec<u8> {
    get_time_echoing(mid, None)
}

/// [`get_time`] carrying Echo `echo`.
fn get_time_echoing(mid: u16, echo: Option<&[u8]>) -> Vec<u8> {
    let mut buf = vec![0; 64];
    let token = mid.to_be_bytes();
    let mut encoder =
        MessageEncoder::new(&mut buf, MessageType::Confirmable, Code::GET, mid, &token).unwrap();
    encoder.option(OptionNumber::URI_PATH, b"time").unwrap();
    if let Some(echo) = echo {
        encoder.option(OptionNumber::ECHO, echo).unwrap();
    }
    let len = encoder.finish();
    buf.truncate(len);
    buf
}

/// Proves the client fresh to a server just started, whose replay window is lost (RFC 8613
/// Appendix B.1.2): a first request earns a protected 4.01 with Echo, and the request again
/// with that value is served.
fn prove_freshness(raw: &mut Raw, client: &mut SecurityContext) {
    let (first, id) = protect(client, &get_time(0x4f00));
    let answer = raw.ask_datagram(&first);
    let outer = Message::parse(&answer.datagram).unwrap();
    let mut plain = [0; 512];
    let len = client
        .unprotect_response(&outer, &id, &mut plain)
        .expect("a protected challenge");
    let challenge = Message::parse(&plain[..len]).unwrap();
    assert_eq!(challenge.code(), Code::UNAUTHORIZED);
    let echo = challenge.option(OptionNumber::ECHO).expect("an Echo value");
    let (proof, id) = protect(client, &get_time_echoing(0x4f01, Some(echo)));
    assert_served(raw, client, &proof, &id);
}

/// `plain` protected under `context`, and what its response is bound to.
fn protect(context: &mut SecurityContext, plain: &[u8]) -> (Vec<u8>, RequestId) {
    let mut out = vec![0; 256];
    let (len, request) = context
        .protect_request(&Message::parse(plain).unwrap(), &mut out)
        .expect("protect the request");
    out.truncate(len);
    (out, request)
}

/// `protected` re-encoded under message ID `mid`, with its OSCORE option value and its
/// payload replaced where given.
fn forged(protected: &[u8], mid: u16, option: Option<&[u8]>, payload: Option<&[u8]>) -> Vec<u8> {
    let m = Message::parse(protected).unwrap();
    let mut buf = vec![0; protected.len() + 64];
    let mut encoder =
        MessageEncoder::new(&mut buf, m.message_type(), m.code(), mid, m.token_bytes()).unwrap();
    for o in m.options() {
        let value = match (o.number, option) {
            (OptionNumber::OSCORE, Some(v)) => v,
            _ => o.value,
        };
        encoder.option(o.number, value).unwrap();
    }
    let payload = payload.unwrap_or(m.payload());
    if !payload.is_empty() {
        encoder.payload(payload).unwrap();
    }
    let len = encoder.finish();
    buf.truncate(len);
    buf
}

/// Asserts `answer` is the unprotected error `code` with `diagnostic` and Max-Age 0.
fn assert_refused(answer: &Answer, code: Code, diagnostic: &str, case: &str) {
    assert_eq!(answer.code, code, "{case}: {}", answer.text());
    assert_eq!(answer.payload, diagnostic.as_bytes(), "{case}");
    assert_eq!(answer.max_age, Some(0), "{case}: cacheable refusal");
}

/// Sends `protected` and checks its answer is a protected 2.05 Content that verifies.
fn assert_served(raw: &mut Raw, client: &mut SecurityContext, protected: &[u8], id: &RequestId) {
    let answer = raw.ask_datagram(protected);
    assert_eq!(answer.code, Code::CHANGED, "{}", answer.text());
    let outer = Message::parse(&answer.datagram).unwrap();
    let mut plain = [0; 1024];
    let len = client
        .unprotect_response(&outer, id, &mut plain)
        .expect("a protected answer that verifies");
    assert_eq!(Message::parse(&plain[..len]).unwrap().code(), Code::CONTENT);
}

#[test]
fn hostile_oscore_requests_get_their_error_and_leave_the_replay_window_alone() {
    let mut server = OscoreServer::start("hostile");
    let mut raw = Raw::to(server.port);
    let mut client = SecurityContext::derive(&CLIENT).unwrap();
    prove_freshness(&mut raw, &mut client);
    // Every forgery below reuses this request's sequence number, so had any of them been
    // taken in, the genuine request would be a replay at the end.
    let (genuine, id) = protect(&mut client, &get_time(0x5000));
    let ciphertext = Message::parse(&genuine).unwrap().payload().to_vec();
    let mut flipped = ciphertext.clone();
    flipped[0] ^= 0x01;
    let mut bad_tag = ciphertext.clone();
    *bad_tag.last_mut().unwrap() ^= 0x80;

    let bad_option = (Code::BAD_OPTION, "malformed OSCORE message");
    let not_found = (Code::UNAUTHORIZED, "Security context not found");
    let undecryptable = (Code::BAD_REQUEST, "Decryption failed");
    type Case<'a> = (&'a str, Option<&'a [u8]>, Option<&'a [u8]>, (Code, &'a str));
    let cases: [Case<'_>; 9] = [
        // n = 5 and the kid flag, but no Partial IV bytes follow.
        ("truncated option", Some(&[0x0d]), None, bad_option),
        ("reserved flag bits", Some(&[0x29, 0x00]), None, bad_option),
        // n = 6 is reserved (§6.1): a Partial IV above 2^40 − 1 cannot be written.
        (
            "six-byte Partial IV",
            Some(&[0x0e, 1, 2, 3, 4, 5, 6]),
            None,
            bad_option,
        ),
        // kid context flag with a length byte beyond the value.
        (
            "truncated kid context",
            Some(&[0x19, 0x00, 0x05, 0xaa]),
            None,
            bad_option,
        ),
        (
            "ciphertext shorter than a tag",
            None,
            Some(&[0x01, 0x02, 0x03]),
            bad_option,
        ),
        ("unknown kid", Some(&[0x09, 0x00, 0x42]), None, not_found),
        (
            "kid context the server has not",
            Some(&[0x19, 0x00, 0x02, 0xaa, 0xbb]),
            None,
            not_found,
        ),
        ("corrupt ciphertext", None, Some(&flipped), undecryptable),
        ("corrupt tag", None, Some(&bad_tag), undecryptable),
    ];
    for (i, (case, option, payload, (code, diagnostic))) in cases.into_iter().enumerate() {
        let datagram = forged(&genuine, 0x5100 + i as u16, option, payload);
        let answer = raw.ask_datagram(&datagram);
        assert_refused(&answer, code, diagnostic, case);
        assert!(server.process.running(), "{case}: the server stopped");
    }
    // The log says why each was refused.
    for (code, diagnostic) in [
        "4.02 Bad Option \"malformed OSCORE message\"",
        "4.01 Unauthorized \"Security context not found\"",
        "4.00 Bad Request \"Decryption failed\"",
    ]
    .iter()
    .map(|t| t.split_once(' ').unwrap())
    {
        server
            .process
            .logged(&format!("-> {code} {diagnostic} in "));
    }
    // Sequence number 0 is still fresh: the genuine request is served.
    assert_served(&mut raw, &mut client, &genuine, &id);
}

#[test]
fn a_replay_flood_is_refused_copy_by_copy_and_service_continues() {
    let mut server = OscoreServer::start("flood");
    let mut raw = Raw::to(server.port);
    let mut client = SecurityContext::derive(&CLIENT).unwrap();
    prove_freshness(&mut raw, &mut client);
    let (first, id) = protect(&mut client, &get_time(0x6000));
    assert_served(&mut raw, &mut client, &first, &id);

    // The same protected request again under new message IDs, so deduplication does not
    // answer them from its cache and each reaches the replay window.
    let mut answers = Vec::new();
    for burst in 0..FLOOD / BURST {
        for i in 0..BURST {
            let mid = 0x6100 + (burst * BURST + i) as u16;
            raw.send_datagram(&forged(&first, mid, None, None));
        }
        answers.extend(raw.next_answers(BURST));
    }
    // Every copy is answered, and every answer is the refusal: none was served twice.
    assert_eq!(answers.len(), FLOOD, "copies left unanswered");
    for answer in &answers {
        assert_refused(
            answer,
            Code::UNAUTHORIZED,
            "Replay detected",
            "replayed copy",
        );
    }
    server
        .process
        .logged("-> 4.01 Unauthorized \"Replay detected\" in ");
    assert!(server.process.running(), "the flood stopped the server");
    // The next sequence number is served as ever.
    let (next, id) = protect(&mut client, &get_time(0x7000));
    assert_served(&mut raw, &mut client, &next, &id);
}

/// After a restart, a request recorded before it (the window was not kept) is answered only
/// with a protected Echo challenge, never served; the client proves its freshness and is.
#[test]
fn a_request_recorded_before_a_restart_earns_a_challenge_not_service() {
    let mut server = OscoreServer::start("restart");
    let mut raw = Raw::to(server.port);
    let mut client = SecurityContext::derive(&CLIENT).unwrap();
    prove_freshness(&mut raw, &mut client);
    let (recorded, id) = protect(&mut client, &get_time(0x7100));
    assert_served(&mut raw, &mut client, &recorded, &id);

    server.restart();
    let mut raw = Raw::to(server.port);
    let answer = raw.ask_datagram(&forged(&recorded, 0x7101, None, None));
    let outer = Message::parse(&answer.datagram).unwrap();
    let mut plain = [0; 512];
    let len = client
        .unprotect_response(&outer, &id, &mut plain)
        .expect("a protected answer");
    let inner = Message::parse(&plain[..len]).unwrap();
    assert_eq!(inner.code(), Code::UNAUTHORIZED, "challenged, not served");
    assert!(inner.has_option(OptionNumber::ECHO));
    prove_freshness(&mut raw, &mut client);
}
