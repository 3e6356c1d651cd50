//! A spoofed loopback source gets no management rights: a neighbour on a veth pair sends a raw
//! IPv6 datagram whose source is the IPv4-mapped loopback address `::ffff:127.0.0.1` to the
//! `[::]` socket of `covey gateway`, carrying a CON `DELETE /e/<entity>`. The kernel takes it
//! in on the dual-stack socket; Covey drops it because it did not arrive on the loopback
//! interface, so the entity stays and nothing is answered. A control datagram built the same
//! way from the neighbour's real address is answered (4.01), so the crafted datagrams do
//! reach the gateway. Needs root (CAP_NET_ADMIN, raw sockets), iproute2 and python3.

mod gateway_support;
mod netns;
mod support;

use std::io::{BufRead, BufReader};
use std::net::Ipv6Addr;
use std::process::{Command, Stdio};
use std::time::Duration;

use covey_core::{Code, Message, MessageEncoder, MessageType, OptionNumber};
use netns::{is_root, ula, Lab};
use support::{run_limited, stderr, stdout};

const GATEWAY: usize = 1;
const NEIGHBOUR: usize = 2;
const SUBNET: u16 = 0x0c1;
/// The port the spoofed datagram claims, on the gateway's host.
const SPOOFED_PORT: u16 = 42222;

/// Sends one UDP datagram over a raw IPv6 socket (header included, so any source address):
/// `python3 - SRC DST SPORT DPORT HEX [LISTEN_SECONDS]`. With LISTEN_SECONDS it first binds
/// a UDP socket to SPORT and prints each datagram that comes back, in hex.
const SENDER: &str = r#"
import socket, struct, sys, time
src, dst, sport, dport, hexed = sys.argv[1:6]
sport, dport, payload = int(sport), int(dport), bytes.fromhex(hexed)
listen = float(sys.argv[6]) if len(sys.argv) > 6 else 0
if listen:
    back = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    back.bind(("::", sport))
    back.settimeout(0.1)
s6, d6 = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
length = 8 + len(payload)
udp = struct.pack("!HHHH", sport, dport, length, 0) + payload
data = s6 + d6 + struct.pack("!I3xB", length, 17) + udp + b"\0" * (len(udp) % 2)
total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
while total >> 16:
    total = (total & 0xffff) + (total >> 16)
udp = udp[:6] + struct.pack("!H", (~total & 0xffff) or 0xffff) + udp[8:]
header = struct.pack("!IHBB", 6 << 28, length, 17, 64) + s6 + d6
raw = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)
raw.sendto(header + udp, (dst, 0))
end = time.time() + listen
while time.time() < end:
    try:
        print(back.recv(2048).hex(), flush=True)
    except socket.timeout:
        pass
"#;

/// Prints every datagram to 127.0.0.1:PORT in hex for SECONDS: `python3 - PORT SECONDS`.
const LISTENER: &str = r#"
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.settimeout(0.1)
print("ready", flush=True)
end = time.time() + float(sys.argv[2])
while time.time() < end:
    try:
        print(s.recv(2048).hex(), flush=True)
    except socket.timeout:
        pass
"#;

/// A CON DELETE of `/e/<entity>`.
fn delete(entity: &str, mid: u16) -> String {
    let mut buf = [0u8; 64];
    let mut enc = MessageEncoder::new(
        &mut buf,
        MessageType::Confirmable,
        Code::DELETE,
        mid,
        &[0x5a, 0x17],
    )
    .expect("header");
    enc.option(OptionNumber::URI_PATH, b"e").expect("path");
    enc.option(OptionNumber::URI_PATH, entity.as_bytes())
        .expect("path");
    let n = enc.finish();
    buf[..n].iter().map(|b| format!("{b:02x}")).collect()
}

/// `python3 -c SCRIPT ARGS` in host `n`.
fn python_in(lab: &Lab, n: usize, script: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", &lab.host(n), "python3", "-c", script])
        .args(args);
    cmd
}

/// The CoAP codes of the hex datagrams printed one a line.
fn codes(printed: &str) -> Vec<Code> {
    printed
        .lines()
        .filter_map(|l| {
            let bytes: Vec<u8> = (0..l.len() / 2)
                .filter_map(|i| u8::from_str_radix(l.get(2 * i..2 * i + 2)?, 16).ok())
                .collect();
            Message::parse(&bytes).ok().map(|m| m.code())
        })
        .collect()
}

#[test]
#[ignore = "needs root"]
fn a_spoofed_ipv4_mapped_loopback_source_cannot_delete_an_entity() {
    assert!(
        is_root(),
        "this test creates network namespaces and raw sockets and must run as root (CAP_NET_ADMIN)"
    );
    let prefix = format!("cvl-spoof-{}", std::process::id());
    let mut lab = Lab::new(&prefix, Duration::from_secs(20));
    lab.build_ipv6(NEIGHBOUR, SUBNET);
    let db = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}.db"));
    let _ = std::fs::remove_file(&db);
    let db = db.to_str().expect("a UTF-8 path").to_string();
    lab.start(GATEWAY, &["serve", "--bind", "[::]:5684"]);
    lab.start(
        GATEWAY,
        &["gateway", "--bind", "[::]:5683", "--db", &db, "--no-http"],
    );
    lab.wait_until_serving(GATEWAY, Ipv6Addr::LOCALHOST, GATEWAY);
    let member = ["get", "-B", "0.3", "coap://[::1]:5684/.well-known/core"];
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !lab.covey_in(GATEWAY, &member).status.success() {
        assert!(
            std::time::Instant::now() < deadline,
            "no member\n{}",
            lab.logs()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let create = [
        "entity",
        "create",
        "coap://[::1]:5683",
        "lab2",
        "--member",
        "coap://[::1]:5684/sensors/temp",
    ];
    let out = lab.covey_in(GATEWAY, &create);
    assert!(
        out.status.success(),
        "entity create: {}{}\n{}",
        stdout(&out),
        stderr(&out),
        lab.logs()
    );
    let gateway = ula(SUBNET, GATEWAY).to_string();

    // Crafted datagrams reach the gateway: from the neighbour's own address, 4.01.
    let control = python_in(
        &lab,
        NEIGHBOUR,
        SENDER,
        &[
            &ula(SUBNET, NEIGHBOUR).to_string(),
            &gateway,
            "40001",
            "5683",
            &delete("lab2", 0x1001),
            "3",
        ],
    );
    let out = run_limited(control, Duration::from_secs(20));
    assert!(out.status.success(), "control: {}", stderr(&out));
    assert!(
        codes(&stdout(&out)).contains(&Code::UNAUTHORIZED),
        "the control DELETE is refused: {:?}\n{}",
        stdout(&out),
        lab.logs()
    );

    // The answer to the spoofed source would go to 127.0.0.1:42222 on the gateway's host.
    let mut listener = python_in(&lab, GATEWAY, LISTENER, &[&SPOOFED_PORT.to_string(), "4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the listener");
    let mut lines = BufReader::new(listener.stdout.take().expect("its output")).lines();
    let ready = lines.next().and_then(Result::ok);
    assert_eq!(ready.as_deref(), Some("ready"), "the listener started");
    let spoofed = python_in(
        &lab,
        NEIGHBOUR,
        SENDER,
        &[
            "::ffff:127.0.0.1",
            &gateway,
            &SPOOFED_PORT.to_string(),
            "5683",
            &delete("lab2", 0x1002),
        ],
    );
    let out = run_limited(spoofed, Duration::from_secs(20));
    assert!(out.status.success(), "spoofed: {}", stderr(&out));
    let answered: String = lines.map_while(Result::ok).collect::<Vec<_>>().join("\n");
    let _ = listener.wait();
    assert_eq!(
        codes(&answered),
        [],
        "the spoofed DELETE is dropped, not answered\n{}",
        lab.logs()
    );
    let out = lab.covey_in(GATEWAY, &["get", "coap://[::1]:5683/e/lab2/profile"]);
    assert!(
        out.status.success(),
        "entity lab2 is still there: {}{}\n{}",
        stdout(&out),
        stderr(&out),
        lab.logs()
    );
}
