//! coaps:// over loopback: a DTLS client and server in one process, with pre-shared keys and
//! certificates; Apps see the identity the client proved; a wrong key fails the request with
//! a handshake error instead of a timeout.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use covey::dtls::{CertifiedKey, DtlsConfig, TrustAnchors};
use covey::{
    Client, Code, ContentFormat, Error, Resource, Response, Server, Trace, TraceDirection,
};

mod support;

use support::{psk, WhoAmI, LIMIT};

fn certified(name: &str) -> CertifiedKey {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/dtls/testdata");
    CertifiedKey::from_pem_files(
        &dir.join(format!("{name}.crt")),
        &dir.join(format!("{name}.key")),
    )
    .unwrap()
}

fn start(config: DtlsConfig) -> Server {
    Server::builder()
        .bind("127.0.0.1:0".parse().unwrap())
        .dtls(config)
        .app(Box::new(WhoAmI))
        .resource(
            "/hello",
            Resource::new().get(|_| async { Response::content(ContentFormat::TEXT_PLAIN, "hi") }),
        )
        .resource(
            "/big",
            Resource::new()
                .get(|_| async { Response::content(ContentFormat::TEXT_PLAIN, vec![b'x'; 900]) }),
        )
        .start()
        .unwrap()
}

fn uri(server: &Server, path: &str) -> String {
    format!("coaps://{}{path}", server.local_addrs()[0])
}

#[tokio::test]
async fn psk_requests_reach_resources_and_apps_with_the_identity() {
    let server = start(psk("em:other\nward-3:secret"));
    let client = Client::builder()
        .dtls(psk("ward-3:secret"))
        .build()
        .unwrap();
    let hello = client
        .request(Code::GET, uri(&server, "/hello"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(
        (hello.code, &hello.payload[..]),
        (Code::CONTENT, &b"hi"[..])
    );
    let who = client
        .request(Code::GET, uri(&server, "/whoami"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&who.payload), "psk:ward-3");
    for _ in 0..20 {
        let again = client
            .request(Code::GET, uri(&server, "/hello"))
            .timeout(LIMIT)
            .await
            .unwrap();
        assert_eq!(again.code, Code::CONTENT);
    }
}

#[tokio::test]
async fn certificate_clients_are_named_by_fingerprint_and_by_subject_when_the_ca_vouches() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/dtls/testdata");
    let mut config = DtlsConfig::certificate(certified("server"));
    config.require_client_certificate = true;
    config.trust_anchors = Some(TrustAnchors::from_pem_file(&testdata.join("ca.crt")).unwrap());
    let server = start(config);
    let whoami = |name: &'static str| {
        let uri = uri(&server, "/whoami");
        async move {
            let client = Client::builder()
                .dtls(DtlsConfig::certificate(certified(name)))
                .build()
                .unwrap();
            let who = client.request(Code::GET, uri).timeout(LIMIT).await.unwrap();
            String::from_utf8_lossy(&who.payload).to_string()
        }
    };
    let who = whoami("operator").await;
    assert!(who.starts_with("cert:CN=ops.example.org sha256:"), "{who}");
    // A self-signed certificate: anyone could have written that subject.
    let who = whoami("forged").await;
    assert!(who.starts_with("cert:sha256:"), "{who}");
    let who = whoami("client").await;
    assert!(who.starts_with("cert:sha256:"), "{who}");
}

#[tokio::test]
async fn certificates_larger_than_2_kb_complete_the_handshake_in_both_directions() {
    // The server asks for the client's certificate; both are 3.9 KB of DER.
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/dtls/testdata");
    let mut config = DtlsConfig::certificate(certified("large"));
    config.require_client_certificate = true;
    config.trust_anchors = Some(TrustAnchors::from_pem_file(&testdata.join("ca.crt")).unwrap());
    let server = start(config);
    let client = Client::builder()
        .dtls(DtlsConfig::certificate(certified("large")))
        .build()
        .unwrap();
    let who = client
        .request(Code::GET, uri(&server, "/whoami"))
        .timeout(LIMIT)
        .await
        .unwrap();
    let who = String::from_utf8_lossy(&who.payload);
    assert!(
        who.starts_with("cert:CN=large.example.org sha256:"),
        "{who}"
    );
}

#[tokio::test]
async fn a_server_certificate_over_the_clients_limit_fails_with_a_handshake_error() {
    let server = start(DtlsConfig::certificate(certified("large")));
    let mut config = DtlsConfig::certificate(certified("client"));
    config.limits.max_peer_certificate = 2048;
    let client = Client::builder().dtls(config).build().unwrap();
    let e = client
        .request(Code::GET, uri(&server, "/hello"))
        .timeout(LIMIT)
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Handshake { .. }), "{e}");
    // The server is still up for a client whose limit allows its certificate.
    let client = Client::builder()
        .dtls(DtlsConfig::certificate(certified("client")))
        .build()
        .unwrap();
    let hello = client
        .request(Code::GET, uri(&server, "/hello"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(hello.code, Code::CONTENT);
}

#[tokio::test]
async fn a_wrong_key_fails_with_a_handshake_error_and_the_server_stays_up() {
    let server = start(psk("ward-3:secret"));
    // A server refusing the key cannot tell the client so in a record the client can read,
    // so the client learns it when its handshake gives up.
    let mut guess = psk("ward-3:guess");
    guess.limits.handshake_timeout = Duration::from_secs(2);
    let wrong = Client::builder().dtls(guess).build().unwrap();
    let e = wrong
        .request(Code::GET, uri(&server, "/hello"))
        .timeout(LIMIT)
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Handshake { .. }), "{e}");
    let right = Client::builder()
        .dtls(psk("ward-3:secret"))
        .build()
        .unwrap();
    let hello = right
        .request(Code::GET, uri(&server, "/hello"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(hello.code, Code::CONTENT);
}

#[tokio::test]
async fn schemes_must_match_what_the_client_speaks() {
    let server = start(psk("ward-3:secret"));
    let plain = Client::new().unwrap();
    let e = plain
        .request(Code::GET, uri(&server, "/hello"))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::InvalidUri { .. }), "{e}");
    let secured = Client::builder()
        .dtls(psk("ward-3:secret"))
        .build()
        .unwrap();
    let clear = format!("coap://{}/hello", server.local_addrs()[0]);
    let e = secured.request(Code::GET, clear).await.unwrap_err();
    assert!(matches!(e, Error::InvalidUri { .. }), "{e}");
}

#[tokio::test]
async fn cookie_verified_peers_get_large_responses_without_an_echo_challenge() {
    // In the clear, a 900-byte answer to a short request from a new peer is over the
    // amplification budget (3x) and is cut with an Echo challenge; over DTLS the cookie
    // exchange has verified the address, so it comes whole in one datagram.
    let server = start(psk("ward-3:secret"));
    let received = Arc::new(AtomicUsize::new(0));
    let counter = received.clone();
    let client = Client::builder()
        .dtls(psk("ward-3:secret"))
        .trace(Arc::new(move |t: &Trace<'_>| {
            if t.direction == TraceDirection::Received {
                counter.fetch_add(1, Ordering::Relaxed);
            }
        }))
        .build()
        .unwrap();
    let big = client
        .request(Code::GET, uri(&server, "/big"))
        .timeout(LIMIT)
        .await
        .unwrap();
    assert_eq!(big.payload.len(), 900);
    assert_eq!(
        received.load(Ordering::Relaxed),
        1,
        "one response, no Echo round"
    );
    assert!(big.options.get(covey::OptionNumber::ECHO).is_none());
}
