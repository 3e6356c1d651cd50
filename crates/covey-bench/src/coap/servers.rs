//! The servers `covey bench` starts itself: libcoap's `coap-server-notls` and `covey serve`,
//! each pinned to one CPU, on a loopback port; readiness probing and RSS.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use covey::dtls::DtlsConfig;
use covey_core::{CoapOption, Code, OptionNumber};
use covey_proto::{Config, Endpoint, Event, LocalAddr, Request, RequestParams};

use super::dtls_link::DtlsLink;

/// libcoap's server binary (Debian `libcoap3-bin`).
pub const LIBCOAP_SERVER: &str = "coap-server-notls";

/// libcoap's server with DTLS (OpenSSL back end).
pub const LIBCOAP_DTLS_SERVER: &str = "coap-server-openssl";

/// How the started servers and the generator speak coaps: the servers' flags and the
/// generator's credentials.
#[derive(Debug, Clone)]
pub struct ServerDtls {
    /// Flags of libcoap's server (`-k KEY` or `-c CERT -j KEY`).
    pub libcoap: Vec<String>,
    /// Flags of `covey serve` (`-u ID -k KEY` or `--cert CERT --key KEY`).
    pub covey: Vec<String>,
    /// The generator's credentials.
    pub client: DtlsConfig,
}

/// Which server to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// libcoap's `coap-server-notls -A 127.0.0.1 -p PORT`.
    Libcoap,
    /// `covey serve --bind 127.0.0.1:PORT` (this binary).
    Covey,
}

impl ServerKind {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Libcoap => "libcoap",
            ServerKind::Covey => "covey",
        }
    }
}

/// A running server process; killed when dropped.
#[derive(Debug)]
pub struct Spawned {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    /// The command line it was started with.
    pub command: String,
}

impl Spawned {
    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its resident set size now, in KiB.
    pub fn rss_kib(&self) -> Option<u64> {
        rss_kib(self.pid())
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `kind` on 127.0.0.1:`port`, pinned to `cpu` (covey with `busy_poll_us` and the
/// flags `covey_extra`), and waits until it answers a GET of `path_options`.
pub fn spawn(
    kind: ServerKind,
    port: u16,
    cpu: Option<usize>,
    busy_poll_us: Option<u64>,
    path_options: &[(OptionNumber, Vec<u8>)],
    dtls: Option<&ServerDtls>,
    covey_extra: &[String],
) -> io::Result<Spawned> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut command = match (kind, dtls) {
        (ServerKind::Libcoap, None) => {
            let mut c = Command::new(LIBCOAP_SERVER);
            c.args(["-A", "127.0.0.1", "-p", &port.to_string()]);
            c
        }
        (ServerKind::Libcoap, Some(dtls)) => {
            // libcoap serves coaps on the port after its coap port.
            let mut c = Command::new(LIBCOAP_DTLS_SERVER);
            c.args(["-A", "127.0.0.1", "-p", &port.saturating_sub(1).to_string()])
                .args(&dtls.libcoap);
            c
        }
        (ServerKind::Covey, _) => {
            let covey = covey_cli_base::program::program("covey")
                .map_err(|e| io::Error::new(io::ErrorKind::NotFound, e.to_string()))?;
            let mut c = Command::new(covey);
            c.args(["serve", "--bind", &addr.to_string()]);
            if let Some(us) = busy_poll_us {
                c.args(["--busy-poll-us", &us.to_string()]);
            }
            if let Some(dtls) = dtls {
                c.args(&dtls.covey);
            }
            c.args(covey_extra);
            c
        }
    };
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let text = format!("{command:?}").replace('"', "");
    let text = match cpu {
        Some(cpu) => format!("taskset -c {cpu} {text}"),
        None => text,
    };
    // The child inherits the CPU affinity of the thread that forks it: a short-lived thread
    // pinned to `cpu` starts it, so no other thread of ours changes its affinity.
    let child = std::thread::scope(|s| {
        s.spawn(|| {
            if let Some(cpu) = cpu {
                if !super::load::pin_current_thread(cpu) {
                    return Err(io::Error::other(format!("cannot pin to CPU {cpu}")));
                }
            }
            command.spawn()
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("spawning thread panicked")))
    })
    .map_err(|e| io::Error::new(e.kind(), format!("cannot start {text}: {e}")))?;
    let mut spawned = Spawned {
        child,
        addr,
        command: text,
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Some(status) = spawned.child.try_wait()? {
            return Err(io::Error::other(format!(
                "{} exited at start ({status})",
                spawned.command
            )));
        }
        // A probe over DTLS first needs a handshake.
        let wait = Duration::from_millis(if dtls.is_some() { 2000 } else { 200 });
        if probe(addr, path_options, wait, dtls.map(|d| &d.client)) {
            return Ok(spawned);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!("{} did not answer within 10 s", spawned.command),
    ))
}

/// Whether a CON GET of `options` to `addr` is answered within `wait` (over DTLS with
/// `dtls`).
pub fn probe(
    addr: SocketAddr,
    options: &[(OptionNumber, Vec<u8>)],
    wait: Duration,
    dtls: Option<&DtlsConfig>,
) -> bool {
    let bind = if addr.is_ipv6() {
        "[::]:0"
    } else {
        "0.0.0.0:0"
    };
    let Ok(socket) = UdpSocket::bind(bind) else {
        return false;
    };
    let _ = socket.set_read_timeout(Some(Duration::from_millis(20)));
    let origin = Instant::now();
    let now = || covey_proto::Instant::from_nanos(origin.elapsed().as_nanos() as u64);
    let Ok(mut ep) = Endpoint::new(Config::default(), 1) else {
        return false;
    };
    let options: Vec<CoapOption<'_>> = options
        .iter()
        .map(|(number, value)| CoapOption {
            number: *number,
            value,
        })
        .collect();
    let request = Request {
        method: Code::GET,
        options: &options,
        payload: &[],
    };
    if ep
        .send_request(now(), addr, &request, RequestParams::default())
        .is_err()
    {
        return false;
    }
    let mut link = match dtls.map(|d| DtlsLink::new(d.clone(), &socket)).transpose() {
        Ok(link) => link,
        Err(_) => return false,
    };
    let mut buf = [0u8; 1500];
    while origin.elapsed() < wait {
        while let Some(t) = ep.poll_transmit(now(), &mut buf) {
            match &mut link {
                Some(link) => link.send(t.destination, &buf[..t.size]),
                None => {
                    let _ = socket.send_to(&buf[..t.size], t.destination);
                }
            }
        }
        if let Some(link) = &mut link {
            link.tick();
            while let Some(record) = link.poll_record() {
                let _ = socket.send_to(&record.datagram, record.remote);
            }
        }
        if let Ok((n, from)) = socket.recv_from(&mut buf) {
            match &mut link {
                Some(link) => {
                    for plaintext in link.receive(from, &buf[..n]) {
                        ep.handle_datagram(now(), from, LocalAddr::UNICAST, &plaintext);
                    }
                }
                None => {
                    ep.handle_datagram(now(), from, LocalAddr::UNICAST, &buf[..n]);
                }
            }
        }
        while let Some(event) = ep.poll_event() {
            if matches!(event, Event::Response { .. }) {
                return true;
            }
        }
    }
    false
}

/// A loopback UDP port free right now.
pub fn free_port() -> io::Result<u16> {
    Ok(UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The resident set size of process `pid` in KiB (`VmRSS` in `/proc/PID/status`).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Whether libcoap's server is installed.
pub fn libcoap_installed() -> bool {
    Command::new(LIBCOAP_SERVER)
        .arg("-?")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}
