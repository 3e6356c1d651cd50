//! The identity a client proves over DTLS reaches the Entity Manager's authorization: a
//! gateway with pre-shared keys and a policy lets the operator manage, lets another
//! authenticated peer only read (4.03 with the reason), and a wrong key gets nowhere. A
//! `subject:` rule holds only for certificates the `--ca` issued: a self-signed look-alike
//! or an expired certificate does not pass it, and a policy naming subjects without `--ca`
//! does not load.

mod support;

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use support::{covey, covey_server, run_limited, stderr, stdout, Background};

const LIMIT: Duration = Duration::from_secs(40);
const OPERATOR: [&str; 4] = ["-u", "operator", "-k", "op-key"];
const READER: [&str; 4] = ["-u", "reader", "-k", "rd-key"];

const POLICY: &str = r#"
[[rule]]
who = ["psk:operator"]
may = ["read", "manage"]

[[rule]]
who = ["authenticated"]
may = ["read"]
"#;

fn request(method: &str, credentials: &[&str], uri: &str) -> Output {
    let mut cmd = covey();
    cmd.args([method, "-B", "4"]).args(credentials).arg(uri);
    run_limited(cmd, LIMIT)
}

#[test]
fn a_dtls_identity_is_what_the_policy_authorizes() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("covey-management-dtls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let keys = dir.join("keys.txt");
    std::fs::write(&keys, "operator:op-key\nreader:rd-key\n").unwrap();
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, POLICY).unwrap();
    let mut cmd = covey();
    cmd.args(["gateway", "--no-http", "--psk-file"])
        .arg(&keys)
        .arg("--policy")
        .arg(&policy)
        .args(["--bind", "127.0.0.1:0", "--db"])
        .arg(dir.join("entities.db"));
    let mut gateway = Background::start_logged(cmd);
    let port = gateway.listening(1)[0].port();
    let base = format!("coaps://127.0.0.1:{port}");

    // Reading is allowed to any authenticated peer.
    let out = request("get", &READER, &format!("{base}/e"));
    assert!(out.status.success(), "reader GET /e: {out:?}");

    // Deleting is not: 4.03 naming the identity, before the EM looks for the entity.
    let out = request("delete", &READER, &format!("{base}/e/absent"));
    assert!(!out.status.success());
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains("4.03") && said.contains("not allowed for psk:reader"),
        "{said}"
    );

    // The operator may: the request gets through to the EM, which has no such entity.
    let out = request("delete", &OPERATOR, &format!("{base}/e/absent"));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains("4.04") && said.contains("no entity named absent"),
        "{said}"
    );

    // A wrong key gets no session, so no answer at all.
    let out = request(
        "delete",
        &["-u", "operator", "-k", "wrong"],
        &format!("{base}/e/absent"),
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("DTLS handshake"), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

const SUBJECT_POLICY: &str = r#"
[[rule]]
who = ["subject:CN=ops.example.org"]
may = ["read", "manage"]

[[rule]]
who = ["authenticated"]
may = ["read"]
"#;

/// Runs `openssl` with `args` in `dir`, which must succeed.
fn openssl(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl (installed by scripts/test.sh)");
    assert!(out.status.success(), "openssl {args:?}: {out:?}");
}

/// A CA, the gateway's own certificate, the operator's certificate from the CA, the same
/// subject self-signed, and one from the CA that expired in 2020.
fn make_certificates(dir: &std::path::Path) {
    for name in ["ca", "gateway", "operator", "forged"] {
        let key = format!("{name}.key");
        openssl(
            dir,
            &[
                "ecparam",
                "-name",
                "prime256v1",
                "-genkey",
                "-noout",
                "-out",
                &key,
            ],
        );
    }
    let self_signed = |name: &str, subject: &str| {
        let (key, crt) = (format!("{name}.key"), format!("{name}.crt"));
        openssl(
            dir,
            &[
                "req", "-x509", "-new", "-key", &key, "-subj", subject, "-days", "30", "-out", &crt,
            ],
        );
    };
    self_signed("ca", "/CN=covey-test-ca");
    self_signed("gateway", "/CN=gateway");
    self_signed("forged", "/CN=ops.example.org");
    openssl(
        dir,
        &[
            "req",
            "-new",
            "-key",
            "operator.key",
            "-subj",
            "/CN=ops.example.org",
            "-out",
            "operator.csr",
        ],
    );
    std::fs::write(
        dir.join("client.ext"),
        "basicConstraints = CA:FALSE\nkeyUsage = digitalSignature\nextendedKeyUsage = clientAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "operator.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-set_serial",
            "2",
            "-days",
            "30",
            "-extfile",
            "client.ext",
            "-out",
            "operator.crt",
        ],
    );
    // openssl ca is what sets a validity period in the past.
    std::fs::create_dir_all(dir.join("db")).unwrap();
    std::fs::write(dir.join("db/index.txt"), "").unwrap();
    std::fs::write(dir.join("db/serial"), "03\n").unwrap();
    std::fs::write(
        dir.join("ca.cnf"),
        "[ca]\ndefault_ca = test\n[test]\ndatabase = db/index.txt\nnew_certs_dir = db\n\
         serial = db/serial\ndefault_md = sha256\npolicy = any\nx509_extensions = client\n\
         unique_subject = no\n[any]\ncommonName = supplied\n[client]\n\
         basicConstraints = CA:FALSE\nkeyUsage = digitalSignature\nextendedKeyUsage = clientAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "ca",
            "-batch",
            "-config",
            "ca.cnf",
            "-cert",
            "ca.crt",
            "-keyfile",
            "ca.key",
            "-in",
            "operator.csr",
            "-startdate",
            "20200101000000Z",
            "-enddate",
            "20200201000000Z",
            "-out",
            "expired.crt",
        ],
    );
}

/// A request with the certificate `name` (its key: the operator's for `expired`).
fn request_as(dir: &std::path::Path, name: &str, args: &[&str]) -> Output {
    let key = if name == "expired" { "operator" } else { name };
    let mut cmd = covey();
    cmd.args([args[0], "-B", "4", "--cert"])
        .arg(dir.join(format!("{name}.crt")))
        .arg("--key")
        .arg(dir.join(format!("{key}.key")))
        .args(&args[1..]);
    run_limited(cmd, LIMIT)
}

#[test]
#[ignore = "needs openssl"]
fn subject_rules_trust_only_certificates_the_ca_issued() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("covey-management-ca-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    make_certificates(&dir);
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, SUBJECT_POLICY).unwrap();
    let gateway = |ca: bool| {
        let mut cmd = covey();
        cmd.args(["gateway", "--no-http", "--cert"])
            .arg(dir.join("gateway.crt"))
            .arg("--key")
            .arg(dir.join("gateway.key"))
            .arg("--policy")
            .arg(&policy)
            .args(["--bind", "127.0.0.1:0"])
            // The member is plain coap, reached from a plain socket.
            .args(["--bind-plain", "127.0.0.1:0", "--db"])
            .arg(dir.join("entities.db"));
        if ca {
            cmd.arg("--ca").arg(dir.join("ca.crt"));
        }
        cmd
    };

    // Without --ca a subject is whatever a certificate says: the policy does not load.
    let out = run_limited(gateway(false), LIMIT);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = stderr(&out);
    assert!(
        said.contains("policy.toml:2: ") && said.contains("needs --ca FILE"),
        "{said}"
    );
    assert_eq!(said.trim().lines().count(), 1, "{said}");

    let mut gateway = Background::start_logged(gateway(true));
    let port = gateway.listening(2)[0].port();
    let (_member, member_port) = covey_server(&[]);
    let base = format!("coaps://127.0.0.1:{port}");
    let entities = format!("{base}/e");
    // The operator's certificate from the CA manages.
    let body =
        format!(r#"{{"name":"room1","er":["coap://127.0.0.1:{member_port}/sensors/temp"]}}"#);
    let create = ["post", "-t", "json", "-e", &body, &entities];
    let out = request_as(&dir, "operator", &create);
    assert!(out.status.success(), "operator creates room1: {out:?}");

    // A self-signed certificate with the operator's name, and the operator's certificate
    // once expired, are known by their fingerprints only: reading, not deleting.
    let room = format!("{base}/e/room1");
    for name in ["forged", "expired"] {
        let out = request_as(&dir, name, &["delete", &room]);
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert!(!out.status.success(), "{name}: {said}");
        assert!(
            said.contains("4.03") && said.contains("cert:sha256:"),
            "{name}: {said}"
        );
        assert!(!said.contains("ops.example.org"), "{name}: {said}");
    }
    let out = request_as(&dir, "forged", &["get", &entities]);
    assert!(
        stdout(&out).contains("room1"),
        "the entity is still there: {out:?}"
    );

    let out = request_as(&dir, "operator", &["delete", &room]);
    assert!(out.status.success(), "the operator deletes room1: {out:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
