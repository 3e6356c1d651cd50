//! The HTTP–CoAP proxy of `covey gateway` (RFC 8075) seen from an HTTP client: status codes,
//! Content-Type ↔ Content-Format, block-wise transfers hidden, Location through the proxy,
//! the Entity Manager's diagnostics, errors of the CoAP side, cross-site refusal, Observe
//! as Server-Sent Events, the Host check against DNS rebinding, the bounds on connections and
//! their time limits — against `covey serve` and the gateway's own EM on loopback. The
//! attacks themselves are in `robustness_http.rs`.

mod gateway_support;
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use gateway_support::{
    covey_run, gateway_with_http, gateway_with_http_and, GatewayProcess, Scratch,
};
use reqwest::blocking::Client;
use reqwest::StatusCode;
use support::{covey_server, stderr};

fn http() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("HTTP client")
}

fn header(r: &reqwest::blocking::Response, name: &str) -> String {
    r.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

#[test]
fn requests_and_responses_are_mapped_both_ways() {
    let scratch = Scratch::new("http-proxy-map");
    let (_gateway, base) = gateway_with_http(&scratch.join("e.db"));
    let (_server, port) = covey_server(&[]);
    let coap = format!("{base}/hc/coap://127.0.0.1:{port}");
    let client = http();

    let r = client
        .get(format!("{coap}/.well-known/core"))
        .send()
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(header(&r, "coap-code"), "2.05");
    assert_eq!(header(&r, "content-type"), "application/link-format");
    assert!(r.text().unwrap().contains("</sensors/temp>"));

    // Block-wise on the CoAP side, one body on the HTTP side.
    let r = client.get(format!("{coap}/large")).send().unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.bytes().unwrap().len(), 2048);

    // Content-Type becomes Content-Format and comes back as Content-Type.
    let r = client
        .put(format!("{coap}/echo"))
        .header("content-type", "application/json")
        .body(r#"{"a":1}"#)
        .send()
        .unwrap();
    assert_eq!(header(&r, "coap-code"), "2.04");
    let r = client.get(format!("{coap}/echo")).send().unwrap();
    assert_eq!(header(&r, "content-type"), "application/json");
    assert!(header(&r, "etag").starts_with('"'));
    assert_eq!(r.text().unwrap(), r#"{"a":1}"#);

    let r = client.get(format!("{coap}/no/such/thing")).send().unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert_eq!(header(&r, "coap-code"), "4.04");

    let r = client
        .put(format!("{coap}/echo"))
        .header("content-type", "image/png")
        .body("x")
        .send()
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let r = client
        .request(reqwest::Method::OPTIONS, format!("{coap}/echo"))
        .send()
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_IMPLEMENTED);
    let r = client
        .get(format!("{base}/hc/coaps://127.0.0.1/x"))
        .send()
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_IMPLEMENTED);
    let r = client.get(format!("{base}/hc/")).send().unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
}

#[test]
fn a_coap_server_that_is_not_there_is_a_bad_gateway() {
    let scratch = Scratch::new("http-proxy-down");
    let (_gateway, base) = gateway_with_http(&scratch.join("e.db"));
    // Nothing listens on UDP port 1 of loopback: the ICMP error makes it 502 at once.
    let r = http()
        .get(format!("{base}/hc/coap://127.0.0.1:1/x"))
        .send()
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_GATEWAY);
    assert!(r.text().unwrap().contains("unreachable"));
}

#[test]
fn entities_are_created_and_deleted_through_the_proxy() {
    let scratch = Scratch::new("http-proxy-em");
    let (gateway, base) = gateway_with_http(&scratch.join("e.db"));
    let (_server, port) = covey_server(&[]);
    let em = format!("{base}/hc/{}", gateway.base());
    let client = http();
    let member = format!("coap://127.0.0.1:{port}/sensors/temp");

    let create = |profile: String| {
        client
            .post(format!("{em}/e"))
            .header("content-type", "application/json")
            .body(profile)
            .send()
            .unwrap()
    };
    let r = create(format!(r#"{{"name":"t","er":["{member}"]}}"#));
    assert_eq!(r.status(), StatusCode::CREATED);
    assert_eq!(
        header(&r, "location"),
        format!("/hc/{}/e/t", gateway.base())
    );

    // The EM's refusal of a JSON request reaches the HTTP client as its JSON error report.
    let refused = format!(r#"{{"name":"u","er":["coap://127.0.0.1:{port}/nothere"]}}"#);
    let r = create(refused.clone());
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(header(&r, "content-type").starts_with("application/json"));
    let report: serde_json::Value = r.json().unwrap();
    assert!(
        report["error"].as_str().unwrap().contains("/nothere"),
        "{report}"
    );
    assert_eq!(
        (&report["field"], &report["reason"]),
        (
            &serde_json::json!("er"),
            &serde_json::json!("member_refused")
        )
    );
    // A client that asks for text gets the diagnostic as text.
    let r = client
        .post(format!("{em}/e"))
        .header("content-type", "application/json")
        .header("accept", "text/plain")
        .body(refused)
        .send()
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(header(&r, "content-type").starts_with("text/plain"));
    assert!(r.text().unwrap().contains("/nothere"));

    let r = client
        .get(format!("{em}/e/t?eo=avg"))
        .header("accept", "application/json")
        .send()
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let doc: serde_json::Value = r.json().unwrap();
    assert_eq!(doc["answered"], 1);
    assert!(doc["value"].is_number(), "{doc}");

    // A browser page from elsewhere cannot delete it; the console's own page can.
    let delete = |name: &str, value: &str| {
        client
            .delete(format!("{em}/e/t"))
            .header(name, value)
            .send()
            .unwrap()
    };
    let listed = || {
        client
            .get(format!("{em}/e"))
            .send()
            .unwrap()
            .text()
            .unwrap()
    };
    let r = delete("origin", "http://attacker.example");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = delete("sec-fetch-site", "cross-site");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(listed().contains("/e/t>"), "{}", listed());
    let r = delete("sec-fetch-site", "same-origin");
    assert!(r.status().is_success(), "{}", r.status());
    assert_eq!(header(&r, "coap-code"), "2.02");
    assert!(!listed().contains("/e/t>"), "{}", listed());
}

#[test]
fn observe_arrives_as_server_sent_events() {
    let scratch = Scratch::new("http-proxy-sse");
    let (_gateway, base) = gateway_with_http(&scratch.join("e.db"));
    let (_server, port) = covey_server(&[]);
    let r = http()
        .get(format!("{base}/hc/coap://127.0.0.1:{port}/sensors/temp"))
        .header("accept", "text/event-stream")
        .send()
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(header(&r, "content-type").starts_with("text/event-stream"));
    let mut events = 0;
    let mut ids = Vec::new();
    for line in BufReader::new(r).lines().take(40) {
        let line = line.unwrap();
        if line == "event: 2.05" {
            events += 1;
        }
        if let Some(id) = line.strip_prefix("id: ") {
            ids.push(id.parse::<u32>().unwrap());
        }
        if let Some(data) = line.strip_prefix("data: ") {
            data.trim().parse::<f64>().expect("a temperature");
        }
        if events == 3 {
            break;
        }
    }
    assert_eq!(events, 3, "three notifications");
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
}

#[test]
fn the_start_up_line_says_where_the_console_is_and_who_reaches_it() {
    let scratch = Scratch::new("http-proxy-startup");
    let (gateway, base) = gateway_with_http(&scratch.join("e.db"));
    let log = gateway.log();
    let line = log
        .lines()
        .find(|l| l.contains("web console"))
        .expect("a start-up line for the console");
    assert!(line.contains(&format!("{base}/")), "{line}");
    assert!(line.contains("loopback only"), "{line}");
    let page = http().get(&base).send().unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page
        .text()
        .unwrap()
        .contains("<title>Covey console</title>"));

    let quiet = GatewayProcess::start(&scratch.join("quiet.db"), &["--no-http"]);
    assert!(!quiet.log().contains("web console"), "{}", quiet.log());
}

#[test]
fn a_busy_http_port_given_by_hand_is_an_error() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let http = busy.local_addr().unwrap().to_string();
    let out = gateway_started_with("http-proxy-busy", &["--http", &http]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains(&http) && err.contains("--http"), "{err}");
}

/// Sends `GET path` naming `host` on a kept-alive connection to `addr`.
fn send_get(stream: &mut TcpStream, host: &str, path: &str) {
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
}

/// Reads one response (its head and a Content-Length body): the status and the body.
fn read_response(stream: &mut TcpStream) -> std::io::Result<(u16, String)> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte)?;
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_string();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let length = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body)?;
    Ok((status, String::from_utf8_lossy(&body).to_string()))
}

fn connect(addr: &str) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect to the console");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
}

#[test]
fn requests_naming_a_host_other_than_the_console_are_refused() {
    let scratch = Scratch::new("http-proxy-hosts");
    let (_gateway, base) = gateway_with_http_and(
        &scratch.join("e.db"),
        &["--http-allow-host", "gateway.example"],
    );
    let addr = base.trim_start_matches("http://").to_string();
    let port = addr.rsplit(':').next().unwrap().to_string();
    let cases = [
        (addr.clone(), 200),
        (format!("localhost:{port}"), 200),
        (format!("GATEWAY.example:{port}"), 200),
        ("gateway.example".to_string(), 200),
        // A site whose name was rebound to 127.0.0.1 sends its own name.
        (format!("rebound.example:{port}"), 403),
        (format!("127.0.0.2:{port}"), 403),
    ];
    for (host, expected) in cases {
        let mut stream = connect(&addr);
        send_get(&mut stream, &host, "/api/info");
        let (status, body) = read_response(&mut stream).unwrap();
        assert_eq!(status, expected, "Host {host}: {body}");
        if expected == 403 {
            assert!(body.contains("--http-allow-host"), "{body}");
        }
    }
    // The proxy is behind the same check.
    let mut stream = connect(&addr);
    send_get(&mut stream, "rebound.example", "/hc/coap://127.0.0.1:1/x");
    assert_eq!(read_response(&mut stream).unwrap().0, 403);
}

#[test]
fn http_connections_beyond_the_bound_wait_until_one_closes() {
    let scratch = Scratch::new("http-proxy-connections");
    let (_gateway, base) =
        gateway_with_http_and(&scratch.join("e.db"), &["--http-max-connections", "2"]);
    let addr = base.trim_start_matches("http://").to_string();
    // Two kept-alive connections, each served once, take both places.
    let mut held: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut s = connect(&addr);
            send_get(&mut s, &addr, "/api/info");
            assert_eq!(read_response(&mut s).unwrap().0, 200);
            s
        })
        .collect();
    // A third client is not served while they stay open...
    let mut third = connect(&addr);
    third
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    send_get(&mut third, &addr, "/api/info");
    let waiting = read_response(&mut third).unwrap_err();
    assert!(
        matches!(
            waiting.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "{waiting}"
    );
    // ...and is once one of them closes; the others are still served meanwhile.
    send_get(&mut held[1], &addr, "/api/info");
    assert_eq!(read_response(&mut held[1]).unwrap().0, 200);
    drop(held.remove(0));
    third
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    assert_eq!(read_response(&mut third).unwrap().0, 200);
}

#[test]
fn a_request_in_progress_outlives_the_idle_timeout() {
    let scratch = Scratch::new("http-proxy-long-request");
    let (_gateway, base) = gateway_with_http_and(
        &scratch.join("e.db"),
        &["--http-idle-timeout", "1", "--http-header-timeout", "1"],
    );
    let (_server, port) = covey_server(&[]);
    // An observation streams for longer than both limits: one notification a second.
    let r = http()
        .get(format!("{base}/hc/coap://127.0.0.1:{port}/time"))
        .header("accept", "text/event-stream")
        .send()
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let events = BufReader::new(r)
        .lines()
        .map_while(Result::ok)
        .filter(|l| l.starts_with("event: 2.05"))
        .take(3)
        .count();
    assert_eq!(events, 3);
    // A kept-alive connection with nothing to do is closed after about a second.
    let addr = base.trim_start_matches("http://").to_string();
    let mut stream = connect(&addr);
    send_get(&mut stream, &addr, "/api/info");
    assert_eq!(read_response(&mut stream).unwrap().0, 200);
    let mut rest = Vec::new();
    assert_eq!(
        stream.read_to_end(&mut rest).unwrap(),
        0,
        "closed, nothing sent"
    );
}

#[test]
fn bad_connection_limits_are_usage_errors() {
    for (flag, value) in [
        ("--http-max-connections-per-address", "0"),
        ("--http-header-timeout", "0"),
        ("--http-idle-timeout", "-1"),
        ("--http-idle-timeout", "nan"),
    ] {
        let arg = format!("{flag}={value}");
        let out = gateway_started_with("http-proxy-bad-limits", &[&arg]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{flag} {value}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains(flag), "{}", stderr(&out));
    }
}

#[test]
fn no_http_connections_at_all_is_a_usage_error() {
    let out = gateway_started_with(
        "http-proxy-zero-connections",
        &["--http-max-connections", "0"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--http-max-connections"));
}

/// Runs `covey gateway` on port 0 with a scratch database and `extra` arguments, for a start
/// that is expected to fail.
fn gateway_started_with(tag: &str, extra: &[&str]) -> std::process::Output {
    let scratch = Scratch::new(tag);
    let db = scratch.join("e.db");
    let mut args = vec![
        "gateway",
        "--bind",
        "127.0.0.1:0",
        "--db",
        db.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    covey_run(&args)
}
