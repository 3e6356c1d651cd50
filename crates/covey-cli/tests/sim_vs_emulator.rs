//! The simulator against the emulator (issue 13, deliverable 5): 10 clients doing
//! continuous CON GETs to one server over a link with 5 % loss and 50 ms one-way delay per
//! direction. The simulator runs the engines on virtual time over the point-to-point link
//! model; the emulator runs real `covey serve` and `covey bench` processes in two network
//! namespaces joined by the same link model on real time. Their median request completion
//! times must agree within 10 %. Needs root: `#[ignore]`d, run with `--include-ignored`.

use std::io::Read;
use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use covey_emu::{self as emu, Testbed};
use covey_lab::scenarios::sim_vs_emu::{simulate, Completion, CrossCheck};
use covey_sim::media::{LossSpec, PropagationDelay};
use serde_json::Value;

const PORT: u16 = 5683;

#[test]
#[ignore = "needs root"]
fn median_completion_times_of_simulator_and_emulator_agree_within_ten_percent() {
    if let Err(why) = emu::require_root() {
        panic!("the emulator cannot run here: {why}");
    }
    let check = CrossCheck::default();
    let simulated = simulate(&check);
    let emulated = emulate(&check);
    eprintln!("simulator: {simulated:?}");
    eprintln!("emulator:  {emulated:?}");
    // For the reader: how much a 30-second run's mean and tail move with the seed alone.
    let mut means: Vec<f64> = (1..=20)
        .map(|seed| simulate(&CrossCheck { seed, ..check }).mean_s)
        .collect();
    means.sort_by(f64::total_cmp);
    eprintln!(
        "simulator mean over seeds 1-20: min {:.3} s, median {:.3} s, max {:.3} s",
        means[0], means[10], means[19]
    );
    let gap = (emulated.p50_s - simulated.p50_s).abs() / simulated.p50_s;
    assert!(
        gap < 0.10,
        "median completion: emulator {:.4} s, simulator {:.4} s ({:.1} % apart)",
        emulated.p50_s,
        simulated.p50_s,
        gap * 100.0
    );
    // Both see the loss: a share of requests waits for a retransmission.
    assert!(simulated.retransmissions > 0 && emulated.retransmissions > 0);
    assert!(emulated.completed > 200, "{emulated:?}");
}

/// Runs the check on the emulator with real covey processes.
fn emulate(check: &CrossCheck) -> Completion {
    let link = emu::emulated_link(
        check.rate_bps,
        PropagationDelay::Fixed(check.one_way),
        LossSpec::Bernoulli { p: check.loss },
        check.queue_packets,
    );
    let mut testbed = Testbed::builder()
        .node("clients")
        .node("server")
        .symmetric_link("clients", "server", link)
        .seed(check.seed)
        .build()
        .expect("testbed");
    let server = testbed.address("server").expect("address");
    let covey = env!("CARGO_BIN_EXE_covey");
    testbed
        .exec(
            "server",
            Command::new(covey)
                .args(["serve", "--bind", &format!("{server}:{PORT}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        )
        .expect("start covey serve");
    wait_until_bound(&testbed, "server", server, PORT);

    let seconds = |d: covey_proto::Duration| format!("{}", d.as_secs_f64());
    let bench = testbed
        .exec(
            "clients",
            Command::new(covey)
                .args([
                    "bench",
                    &format!("coap://{server}:{PORT}/time"),
                    "--con",
                    "--sockets",
                    &check.clients.to_string(),
                    "--window",
                    "1",
                    "--warmup",
                    &seconds(check.warmup),
                    "--duration",
                    &seconds(check.duration),
                    "--json",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        )
        .expect("start covey bench");
    let limit = check.warmup + check.duration + Duration::from_secs(60);
    let deadline = Instant::now() + limit;
    let child = testbed.process(bench).expect("bench");
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "covey bench ends within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut out = String::new();
    let mut err = String::new();
    let _ = child.stdout.take().map(|mut s| s.read_to_string(&mut out));
    let _ = child.stderr.take().map(|mut s| s.read_to_string(&mut err));
    assert!(status.success(), "covey bench failed: {err}");
    let v: Value = serde_json::from_str(&out).expect("bench JSON");
    let micros = |key: &str| v["latency_us"][key].as_f64().expect(key) / 1e6;
    let direction = testbed.direction("clients", "server").expect("direction");
    eprintln!("emulated link clients->server: {direction:?}");
    Completion {
        completed: v["completed"].as_u64().expect("completed"),
        retransmissions: v["retransmissions"].as_u64().expect("retransmissions"),
        p50_s: micros("p50"),
        p90_s: micros("p90"),
        p99_s: micros("p99"),
        mean_s: micros("mean"),
    }
}

/// Waits (bounded) until something holds `address:port` in the node: the server is up.
fn wait_until_bound(testbed: &Testbed, node: &str, address: std::net::Ipv4Addr, port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let free = testbed
            .run_in(node, || UdpSocket::bind((address, port)).is_ok())
            .expect("probe the port");
        if !free {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "covey serve binds {address}:{port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
