//! coaps:// interop with libcoap (Debian libcoap3-bin), both directions, both of its DTLS
//! back ends (OpenSSL and GnuTLS), with pre-shared keys and with ECDSA certificates made by
//! the openssl command for the test; a wrong key fails cleanly on both sides.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use support::{
    covey, covey_serve, peer, run_limited, stderr, stdout, udp_ports_of, Background, START_LIMIT,
};

const LIMIT: Duration = Duration::from_secs(40);
const PACKAGE: &str = "libcoap3-bin";
const BACKENDS: [&str; 2] = ["openssl", "gnutls"];
const PSK: [&str; 4] = ["-u", "ward-3", "-k", "secret-key"];

/// A directory of its own under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("covey-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }

    fn file(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A self-signed P-256 certificate `NAME.crt` and its key `NAME.key` in `dir`.
fn make_certificate(dir: &Path, name: &str) {
    let out = run_limited(
        {
            let mut cmd = Command::new("openssl");
            cmd.args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
                .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
                .arg("-keyout")
                .arg(dir.join(format!("{name}.key")))
                .arg("-out")
                .arg(dir.join(format!("{name}.crt")))
                .args(["-subj", &format!("/CN={name}")]);
            cmd
        },
        LIMIT,
    );
    assert!(out.status.success(), "openssl: {out:?}");
}

fn libcoap_client(backend: &str, args: &[&str]) -> Output {
    let mut cmd = peer(&format!("coap-client-{backend}"), PACKAGE);
    cmd.args(["-B", "5"]).args(args);
    run_limited(cmd, LIMIT)
}

fn covey_get(args: &[&str], uri: &str) -> Output {
    let mut cmd = covey();
    cmd.args(["get", "-B", "4"]).args(args).arg(uri);
    run_limited(cmd, LIMIT)
}

/// Starts libcoap's server with `args` and returns it and its coaps port once it holds it.
///
/// libcoap serves DTLS on its `-p` port + 1 (`-p 0` would put DTLS on port 1) and prints no
/// address, so the pair is chosen here: beside a port the kernel hands out, and taken only
/// when /proc shows the server holding both; another pair is tried when it does not.
fn libcoap_server(backend: &str, args: &[&str]) -> (Background, u16) {
    for _ in 0..5 {
        let port = {
            let probe = std::net::UdpSocket::bind("127.0.0.1:0").expect("an ephemeral port");
            probe.local_addr().expect("its address").port().max(1025) - 1
        };
        let mut cmd = peer(&format!("coap-server-{backend}"), PACKAGE);
        cmd.args(["-A", "127.0.0.1", "-p", &port.to_string()])
            .args(args);
        let mut server = Background::start(cmd);
        let deadline = std::time::Instant::now() + START_LIMIT;
        while server.running() && std::time::Instant::now() < deadline {
            let held = udp_ports_of(server.id());
            if held.contains(&port) && held.contains(&(port + 1)) {
                return (server, port + 1);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    panic!("coap-server-{backend} did not hold a port pair");
}

/// `covey get` of libcoap's root.
fn get_libcoap_root(client: &[&str], port: u16) -> Output {
    covey_get(client, &format!("coaps://127.0.0.1:{port}/"))
}

#[test]
#[ignore = "needs libcoap3-bin"]
fn libcoap_clients_reach_covey_with_psk_and_a_wrong_key_is_refused() {
    let dir = TempDir::new("psk-server");
    let keys = dir.file("keys.txt");
    std::fs::write(&keys, "em:other-key\nward-3:secret-key\n").unwrap();
    let (mut server, listening) = covey_serve(&["--psk-file", &keys]);
    let port = listening[0].port();
    assert_eq!(listening[0].scheme, "coaps");
    let base = format!("coaps://127.0.0.1:{port}");
    for backend in BACKENDS {
        let out = libcoap_client(
            backend,
            &[&PSK[..], &["-m", "get", &format!("{base}/large")]].concat(),
        );
        assert!(out.status.success(), "{backend}: {out:?}");
        assert_eq!(
            stdout(&out).trim_end().len(),
            2048,
            "{backend}: block-wise body"
        );
        let out = libcoap_client(
            backend,
            &[
                &PSK[..],
                &["-m", "put", "-e", "over-dtls", &format!("{base}/echo")],
            ]
            .concat(),
        );
        assert!(out.status.success(), "{backend}: {out:?}");
        let out = libcoap_client(
            backend,
            &[&PSK[..], &["-m", "get", &format!("{base}/echo")]].concat(),
        );
        assert_eq!(stdout(&out).trim(), "over-dtls", "{backend}");
        // A wrong key: libcoap gets no answer, the server stays up.
        let out = libcoap_client(
            backend,
            &[
                "-u",
                "ward-3",
                "-k",
                "guess",
                "-m",
                "get",
                &format!("{base}/echo"),
            ],
        );
        assert!(!stdout(&out).contains("over-dtls"), "{backend}: {out:?}");
        assert!(server.running());
    }
    // Plain CoAP to the coaps port gets nothing either.
    let out = covey_get(&[], &format!("coap://127.0.0.1:{port}/echo"));
    assert!(!out.status.success());
    let out = covey_get(&PSK, &format!("{base}/echo"));
    assert_eq!(stdout(&out).trim(), "over-dtls");
}

#[test]
#[ignore = "needs libcoap3-bin"]
fn covey_reaches_libcoap_servers_with_psk_and_reports_a_wrong_key() {
    for backend in BACKENDS {
        let (_server, port) = libcoap_server(backend, &["-u", "ward-3", "-k", "secret-key"]);
        let out = get_libcoap_root(&PSK, port);
        assert!(out.status.success(), "{backend}: {out:?}");
        assert!(
            stdout(&out).contains("libcoap"),
            "{backend}: {}",
            stdout(&out)
        );
        let out = covey_get(
            &["-u", "ward-3", "-k", "guess"],
            &format!("coaps://127.0.0.1:{port}/"),
        );
        assert_eq!(out.status.code(), Some(1), "{backend}: {out:?}");
        assert!(
            stderr(&out).contains("DTLS handshake"),
            "{backend}: {}",
            stderr(&out)
        );
        assert_eq!(
            stderr(&out).trim().lines().count(),
            1,
            "one line: {}",
            stderr(&out)
        );
    }
}

#[test]
#[ignore = "needs libcoap3-bin and openssl"]
fn certificates_work_both_ways() {
    let dir = TempDir::new("certs");
    make_certificate(&dir.0, "server");
    make_certificate(&dir.0, "client");
    let (server_crt, server_key) = (dir.file("server.crt"), dir.file("server.key"));
    let (client_crt, client_key) = (dir.file("client.crt"), dir.file("client.key"));
    let covey_cert = ["--cert", client_crt.as_str(), "--key", client_key.as_str()];
    let (_server, listening) = covey_serve(&["--cert", &server_crt, "--key", &server_key]);
    let port = listening[0].port();
    for backend in BACKENDS {
        let out = libcoap_client(
            backend,
            &[
                "-c",
                &client_crt,
                "-j",
                &client_key,
                "-m",
                "get",
                &format!("coaps://127.0.0.1:{port}/sensors/temp"),
            ],
        );
        assert!(out.status.success(), "{backend}: {out:?}");
        assert!(
            stdout(&out).trim().parse::<f64>().is_ok(),
            "{backend}: {}",
            stdout(&out)
        );
    }
    for backend in BACKENDS {
        let (_server, port) = libcoap_server(backend, &["-c", &server_crt, "-j", &server_key]);
        let out = get_libcoap_root(&covey_cert, port);
        assert!(out.status.success(), "{backend}: {out:?}");
        assert!(stdout(&out).contains("libcoap"), "{backend}");
    }
}

#[test]
fn bad_credentials_are_one_line_errors() {
    let dir = TempDir::new("bad-credentials");
    let keys = dir.file("keys.txt");
    std::fs::write(&keys, "no colon here\n").unwrap();
    let not_pem = dir.file("not.pem");
    std::fs::write(&not_pem, "hello\n").unwrap();
    let missing = dir.file("missing.txt");
    let cases: Vec<Vec<&str>> = vec![
        vec!["--psk-file", &keys],
        vec!["--psk-file", &missing],
        vec!["--cert", &not_pem, "--key", &not_pem],
        vec!["-u", "", "-k", "x"],
    ];
    for case in &cases {
        for command in ["get", "serve"] {
            let mut cmd = covey();
            cmd.arg(command).args(case);
            if command == "get" {
                cmd.arg("coaps://127.0.0.1:9/");
            } else {
                cmd.args(["--bind", "127.0.0.1:0"]);
            }
            let out = run_limited(cmd, LIMIT);
            assert!(!out.status.success(), "{case:?} {command}: {out:?}");
            let text = stderr(&out);
            assert_eq!(text.trim().lines().count(), 1, "{case:?} {command}: {text}");
        }
    }
    // coaps:// without credentials says what is missing.
    let out = covey_get(&[], "coaps://127.0.0.1:9/");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("DTLS credentials"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[ignore = "needs libcoap3-bin"]
fn covey_gateway_serves_coaps_only() {
    let dir = TempDir::new("gateway");
    let keys = dir.file("keys.txt");
    std::fs::write(&keys, "ward-3:secret-key\n").unwrap();
    let mut cmd = covey();
    cmd.args(["gateway", "--no-http", "--psk-file", &keys])
        .args(["--bind", "127.0.0.1:0"])
        .args(["--db", &dir.file("entities.db")]);
    let mut gateway = Background::start_logged(cmd);
    let port = gateway.listening(1)[0].port();
    let uri = format!("coaps://127.0.0.1:{port}/e");
    let out = covey_get(&PSK, &uri);
    assert!(out.status.success(), "{out:?}");
    // libcoap's client reaches it too; plain CoAP does not.
    let out = libcoap_client("openssl", &[&PSK[..], &["-m", "get", &uri]].concat());
    assert!(out.status.success(), "{out:?}");
    let mut cmd = covey();
    cmd.args(["get", "-B", "1", &format!("coap://127.0.0.1:{port}/e")]);
    assert!(!run_limited(cmd, LIMIT).status.success());
}

#[test]
fn one_server_serves_coap_and_coaps_and_the_gateway_reaches_both_kinds_of_member() {
    let dir = TempDir::new("mixed");
    let keys = dir.file("keys.txt");
    std::fs::write(&keys, "ward-3:secret-key\n").unwrap();
    // A member serving coaps on --bind and coap on --bind-plain at once.
    let (_secure_member, member) =
        covey_serve(&["--psk-file", &keys, "--bind-plain", "127.0.0.1:0"]);
    let (secure, plain) = (&member[0], &member[1]);
    assert_eq!(
        (secure.scheme.as_str(), plain.scheme.as_str()),
        ("coaps", "coap")
    );
    let secure_port = secure.port();
    let plain_bind = plain.addr.to_string();
    let out = covey_get(&[], &format!("coap://{plain_bind}/sensors/temp"));
    assert!(out.status.success(), "coap beside coaps: {out:?}");
    // ... and a member in the clear only.
    let (_clear_member, clear) = covey_serve(&[]);
    let clear_port = clear[0].port();

    let mut cmd = covey();
    cmd.args(["gateway", "--no-http", "--psk-file", &keys])
        .args(["--bind", "127.0.0.1:0", "--bind-plain", "127.0.0.1:0"])
        .args(["--db", &dir.file("entities.db")]);
    let mut gateway = Background::start_logged(cmd);
    let listening = gateway.listening(2);
    let (gateway_port, gateway_plain) = (listening[0].port(), listening[1].addr.to_string());
    let em = format!("coaps://127.0.0.1:{gateway_port}/e");
    let out = covey_get(&PSK, &em);
    assert!(out.status.success(), "{out:?}");

    // Management in the clear is refused: with keys and no policy it needs an identity.
    let body = serde_json::json!({"name": "both", "er": [
        format!("coap://127.0.0.1:{clear_port}/sensors/temp"),
        format!("coaps://127.0.0.1:{secure_port}/sensors/temp"),
    ]})
    .to_string();
    let mut cmd = covey();
    cmd.args(["post", "-B", "4", "-t", "json", "-e", &body])
        .arg(format!("coap://{gateway_plain}/e"));
    let out = run_limited(cmd, LIMIT);
    assert!(!out.status.success(), "{out:?}");
    assert!(stderr(&out).contains("4.01 Unauthorized"), "{out:?}");

    // Over coaps it is created: the EM probes the coaps member over DTLS with its own
    // credentials and the coap member in the clear, and a query asks both.
    let mut cmd = covey();
    cmd.args(["post", "-B", "8", "-t", "json", "-e", &body])
        .args(PSK)
        .arg(&em);
    let out = run_limited(cmd, LIMIT);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout(&out).starts_with("created"), "{out:?}");
    let out = covey_get(&PSK, &format!("{em}/both"));
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout(&out).contains("answered: 2 of 2"),
        "{}",
        stdout(&out)
    );
}
