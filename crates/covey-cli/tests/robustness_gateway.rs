//! Robustness (issue 10, the Entity Manager under attack) against `covey gateway` over
//! loopback: a flood of NON queries of an entity whose members went silent leaves healthy
//! entities answering 2.05 and is answered 5.03 with Max-Age; an entity that reaches itself
//! through a query (`/e/A?eo=lst`) is refused when created or changed; a client beyond its
//! rate of member requests gets 5.03 with Max-Age, a query beyond the per-query budget 4.00.

mod gateway_support;
mod raw_client;
mod support;

use std::net::{IpAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use covey_core::{Code, Message, MessageEncoder, MessageType};
use gateway_support::{covey_run, GatewayProcess, Scratch};
use raw_client::{path, Raw};
use support::stderr;

/// Member resources on loopback that answer every CON GET with 2.05 "1" while alive, and
/// swallow everything once silenced.
struct Members {
    ports: Vec<u16>,
    alive: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Members {
    fn new(n: usize) -> Members {
        let sockets: Vec<UdpSocket> = (0..n)
            .map(|_| {
                let s = UdpSocket::bind("127.0.0.1:0").expect("bind a member");
                s.set_nonblocking(true).expect("non-blocking");
                s
            })
            .collect();
        let ports = sockets
            .iter()
            .map(|s| s.local_addr().expect("address").port())
            .collect();
        let alive = Arc::new(AtomicBool::new(true));
        let stop = Arc::new(AtomicBool::new(false));
        let (a, st) = (alive.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 1500];
            while !st.load(Ordering::Relaxed) {
                let mut idle = true;
                for s in &sockets {
                    while let Ok((n, from)) = s.recv_from(&mut buf) {
                        idle = false;
                        if let (true, Some(reply)) = (a.load(Ordering::Relaxed), answer(&buf[..n]))
                        {
                            let _ = s.send_to(&reply, from);
                        }
                    }
                }
                if idle {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
        Members {
            ports,
            alive,
            stop,
            thread: Some(thread),
        }
    }

    fn uris(&self) -> Vec<String> {
        self.ports
            .iter()
            .map(|p| format!("coap://127.0.0.1:{p}/s"))
            .collect()
    }

    fn silence(&self) {
        self.alive.store(false, Ordering::Relaxed);
    }
}

impl Drop for Members {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The piggy-backed 2.05 "1" to a CON GET.
fn answer(datagram: &[u8]) -> Option<Vec<u8>> {
    let m = Message::parse(datagram).ok()?;
    if m.message_type() != MessageType::Confirmable || m.code() != Code::GET {
        return None;
    }
    let mut buf = [0u8; 64];
    let mut enc = MessageEncoder::new(
        &mut buf,
        MessageType::Acknowledgement,
        Code::CONTENT,
        m.message_id(),
        m.token().as_bytes(),
    )
    .ok()?;
    enc.payload(b"1").ok()?;
    let n = enc.finish();
    Some(buf[..n].to_vec())
}

/// Creates entity `name` with members `er` (through `covey post`, block-wise if large).
fn create(gw: &GatewayProcess, name: &str, er: &[String]) -> std::process::Output {
    let body = serde_json::json!({ "name": name, "er": er }).to_string();
    covey_run(&[
        "post",
        "-t",
        "json",
        "-e",
        &body,
        &format!("{}/e", gw.base()),
    ])
}

fn created(gw: &GatewayProcess, name: &str, er: &[String]) {
    let out = create(gw, name, er);
    assert!(out.status.success(), "{name}: {}", stderr(&out));
}

/// `GET /e/<name>`, by CON from `ip`, answering the gateway's Echo challenge (a query of an
/// entity costs its members requests, so an unverified address is asked to show it
/// receives first).
fn query(gw: &GatewayProcess, ip: &str, name: &str) -> raw_client::Answer {
    let ip: IpAddr = ip.parse().expect("an address");
    Raw::from_ip(ip, gw.port).ask_verified(Code::GET, &[path("e"), path(name)], b"")
}

#[test]
fn a_flood_of_queries_of_a_silent_entity_leaves_healthy_entities_answering() {
    let scratch = Scratch::new("robust-flood");
    let gw = GatewayProcess::start(&scratch.join("entities.db"), &[]);
    let dead = Members::new(64);
    let healthy = Members::new(1);
    created(&gw, "dead", &dead.uris());
    created(&gw, "healthy", &healthy.uris());
    dead.silence();
    // 70 NON queries (1.4 kB) of the silent entity: 4 480 member requests asked for, from
    // an address that has answered Echo (an unverified one would get 4.01 and no fan-out).
    let mut attacker = Raw::to(gw.port);
    let verified = attacker.ask_verified(Code::GET, &[path("e"), path("healthy")], b"");
    assert_eq!(verified.code, Code::CONTENT, "{}", verified.text());
    for _ in 0..70 {
        attacker.send(
            MessageType::NonConfirmable,
            Code::GET,
            &[path("e"), path("dead")],
            b"",
        );
    }
    let refused = attacker.answers_within(Duration::from_secs(1));
    assert!(refused.len() >= 70 - 1024 / 64, "{} refused", refused.len());
    for a in &refused {
        assert_eq!(a.code, Code::SERVICE_UNAVAILABLE, "{}", a.text());
        assert!(a.max_age.is_some_and(|s| s >= 1), "{}", a.text());
    }
    // A well-behaved client (another address) is served meanwhile.
    let started = Instant::now();
    let a = query(&gw, "127.0.0.2", "healthy");
    assert_eq!(a.code, Code::CONTENT, "{}", a.text());
    let healthy_after = started.elapsed();
    let max_ages: Vec<u32> = refused.iter().filter_map(|a| a.max_age).collect();
    eprintln!(
        "70 NON queries of a silent 64-member entity: {} answered 5.03 within 1 s (Max-Age {:?} \
         to {:?} s); the healthy entity answered 2.05 in {healthy_after:?}",
        refused.len(),
        max_ages.iter().min(),
        max_ages.iter().max(),
    );
}

#[test]
fn an_entity_that_reaches_itself_through_a_query_is_refused() {
    let scratch = Scratch::new("robust-cycle");
    let gw = GatewayProcess::start(&scratch.join("entities.db"), &[]);
    let members = Members::new(1);
    let itself = format!("{}?eo=lst", gw.entity_uri("a"));
    let out = create(&gw, "a", std::slice::from_ref(&itself));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("4.00"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cycle: entity a cannot be a member of itself"),
        "{}",
        stderr(&out)
    );
    // Through another entity: b -> a?eo=lst, then a may not take b?eo=lst.
    created(&gw, "a", &members.uris());
    created(&gw, "b", &[itself]);
    let profile = serde_json::json!({ "er": [format!("{}?eo=lst", gw.entity_uri("b"))] });
    let out = covey_run(&[
        "put",
        "-t",
        "json",
        "-e",
        &profile.to_string(),
        &format!("{}/profile", gw.entity_uri("a")),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("cycle: a -> "), "{}", stderr(&out));
    // Both still answer, at once.
    assert_eq!(query(&gw, "127.0.0.1", "b").code, Code::CONTENT);
}

#[test]
fn budgets_answer_service_unavailable_with_max_age_or_bad_request() {
    let scratch = Scratch::new("robust-budget");
    let gw = GatewayProcess::start(
        &scratch.join("entities.db"),
        &["--client-rate", "8", "--query-budget", "4"],
    );
    let members = Members::new(5);
    let uris = members.uris();
    created(&gw, "room", &uris[..4]);
    created(&gw, "big", &uris);
    // Five member requests: over the budget of four, whatever the rate.
    let a = query(&gw, "127.0.0.3", "big");
    assert_eq!(a.code, Code::BAD_REQUEST);
    assert_eq!(
        String::from_utf8_lossy(&a.payload),
        "entity big needs 5 member requests or more; one query may cause 4 at most"
    );
    // Eight a second: two queries of four, then 5.03 with Max-Age.
    assert_eq!(query(&gw, "127.0.0.4", "room").code, Code::CONTENT);
    assert_eq!(query(&gw, "127.0.0.4", "room").code, Code::CONTENT);
    let a = query(&gw, "127.0.0.4", "room");
    assert_eq!(a.code, Code::SERVICE_UNAVAILABLE);
    assert_eq!(a.max_age, Some(1));
    // Another client is not held back.
    assert_eq!(query(&gw, "127.0.0.5", "room").code, Code::CONTENT);
}
