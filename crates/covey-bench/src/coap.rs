//! `covey bench`: a closed-loop CoAP load generator. It keeps `--window` requests
//! outstanding on each of `--sockets` client sockets, driving the sans-IO engine directly
//! over batched UDP (no async client in the way), and prints requests/s, retransmissions,
//! timeouts and latency percentiles. `--against libcoap` starts libcoap's server and
//! `covey serve` in turn on the same pinned CPU and compares them; `--observers N` registers
//! N observations and reports the server's memory.

mod dtls_link;
mod echo;
mod handshakes;
mod load;
mod observers;
mod oscore_load;
mod servers;

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use clap::{Args, ValueEnum};
use covey_core::uri::Uri;
use covey_core::{Code, OptionNumber};
use serde_json::{json, Value};

use load::{LoadSpec, Measurement};
use servers::{ServerDtls, ServerKind, Spawned};

use crate::BenchError;
use covey_cli_base::dtls::DtlsArgs;

/// The path benchmarked on a server `covey bench` starts itself: `/time` is served by both
/// libcoap's example server and `covey serve` (a short text with the current time).
const DEFAULT_PATH: &str = "/time";

/// A request's Uri-* options (number, value), ascending.
type UriOptions = Vec<(OptionNumber, Vec<u8>)>;

/// The peer implementations `--against` can compare with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Peer {
    /// libcoap's `coap-server-notls` (Debian `libcoap3-bin`).
    Libcoap,
}

/// Arguments of `covey bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The resource to load, e.g. coap://127.0.0.1:5683/time (optional with --serve and
    /// --against, which start their own servers on a free loopback port).
    #[arg(value_name = "URI")]
    uri: Option<String>,

    /// Client sockets, each with its own local port (and engine).
    #[arg(long, default_value_t = 4, value_name = "N")]
    sockets: usize,

    /// Requests kept outstanding per socket (1 measures latency).
    #[arg(long, default_value_t = 16, value_name = "W")]
    window: usize,

    /// Send confirmable requests (the default).
    #[arg(long, conflicts_with = "non")]
    con: bool,

    /// Send non-confirmable requests.
    #[arg(long)]
    non: bool,

    /// The path to request (overrides the URI's path).
    #[arg(long, value_name = "PATH")]
    path: Option<String>,

    /// Measured time in seconds.
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    duration: f64,

    /// Seconds of load before measuring.
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    warmup: f64,

    /// Pin the generator's threads to this CPU.
    #[arg(long, value_name = "N")]
    cpu: Option<usize>,

    /// Generator threads (the sockets are dealt among them).
    #[arg(long, default_value_t = 1, value_name = "N")]
    threads: usize,

    /// Message-ID reuse interval of the generator's engines in milliseconds (RFC 7252 asks
    /// for EXCHANGE_LIFETIME, 247 s; on loopback the server tells requests apart anyway).
    #[arg(long, default_value_t = 100, value_name = "MS")]
    mid_reuse_ms: u64,

    /// Start this peer's server and then `covey serve` on the same CPU, load both alike
    /// and print the ratio.
    #[arg(long, value_enum, value_name = "PEER")]
    against: Option<Peer>,

    /// With --against: also load a bare UDP echo on the server CPU (no CoAP processing),
    /// the floor any server could reach in the same run.
    #[arg(long, requires = "against")]
    floor: bool,

    /// Start `covey serve` on a free loopback port and load it.
    #[arg(long, conflicts_with = "against")]
    serve: bool,

    /// Start `covey serve` with an OSCORE context per socket, load it with plain CoAP and
    /// then with every request protected (RFC 8613), alike, and print the ratio.
    #[arg(long, conflicts_with_all = ["against", "serve", "observers", "handshakes", "uri"])]
    oscore: bool,

    /// CPU the started servers are pinned to.
    #[arg(long, value_name = "N")]
    server_cpu: Option<usize>,

    /// `--busy-poll-us` for the `covey serve` the benchmark starts (default: serve's own).
    #[arg(long, value_name = "MICROS")]
    busy_poll_us: Option<u64>,

    /// Loopback port for the started servers (default: a free one).
    #[arg(long, value_name = "PORT")]
    port: Option<u16>,

    /// Instead of load: register this many observations (GET with Observe) and report the
    /// server's resident memory with them.
    #[arg(long, value_name = "N", conflicts_with = "against")]
    observers: Option<usize>,

    /// Process id of the server under load, to report its resident memory (RSS).
    #[arg(long, value_name = "PID")]
    server_pid: Option<u32>,

    /// Print the results as JSON.
    #[arg(long)]
    json: bool,

    /// coaps: measure DTLS handshakes per second (each slot of --sockets opens a session
    /// from a fresh port, closes it once established, and starts again) instead of requests.
    #[arg(long)]
    handshakes: bool,

    /// DTLS credentials: load coaps:// (the servers --against and --serve start use the
    /// same ones; libcoap's is then coap-server-openssl).
    #[command(flatten)]
    dtls: DtlsArgs,
}

/// Runs the benchmark.
pub fn run(args: BenchArgs) -> Result<(), BenchError> {
    let usage = BenchError::Usage;
    if args.window == 0 || args.sockets == 0 || args.threads == 0 {
        return Err(usage(
            "--window, --sockets and --threads must be at least 1".into(),
        ));
    }
    if args.floor && args.dtls.config()?.is_some() {
        return Err(usage(
            "--floor is a plain UDP echo: it cannot be loaded over DTLS".into(),
        ));
    }
    if args.handshakes && args.dtls.config()?.is_none() {
        return Err(usage(
            "--handshakes needs DTLS credentials (-u/-k, --psk-file or --cert/--key)".into(),
        ));
    }
    let duration_ok = args.duration > 0.0 && args.duration.is_finite();
    let warmup_ok = args.warmup >= 0.0 && args.warmup.is_finite();
    if !duration_ok || !warmup_ok {
        return Err(usage(
            "--duration must be positive and --warmup not negative".into(),
        ));
    }
    if let Some(n) = args.observers {
        return run_observers(&args, n);
    }
    if args.oscore {
        return run_oscore(&args);
    }
    match args.against {
        Some(Peer::Libcoap) => run_against(&args),
        None if args.serve => {
            let options = path_options(&args, None)?;
            let server = start(&args, ServerKind::Covey, &options)?;
            let m = measure(&args, server.addr, &options, Some(server.pid()))?;
            let rss = server.rss_kib();
            print_single(
                &args,
                &describe(server.addr, &options),
                &m,
                rss,
                Some(&server.command),
            );
            Ok(())
        }
        None => {
            let uri = args
                .uri
                .as_deref()
                .ok_or_else(|| usage("a URI is needed (or --serve / --against)".into()))?;
            let (remote, uri_options) = resolve(uri)?;
            let options = path_options(&args, Some(uri_options))?;
            let m = measure(&args, remote, &options, args.server_pid)?;
            let rss = args.server_pid.and_then(servers::rss_kib);
            print_single(&args, &describe(remote, &options), &m, rss, None);
            Ok(())
        }
    }
}

fn run_against(args: &BenchArgs) -> Result<(), BenchError> {
    if !servers::libcoap_installed() {
        return Err(BenchError::Other(format!(
            "{} not found: install Debian's libcoap3-bin",
            servers::LIBCOAP_SERVER
        )));
    }
    let options = path_options(args, None)?;
    let mut rows = Vec::new();
    for kind in [ServerKind::Libcoap, ServerKind::Covey] {
        let server = start(args, kind, &options)?;
        let m = measure(args, server.addr, &options, Some(server.pid()))?;
        let rss = server.rss_kib();
        rows.push((kind.name(), server.command.clone(), m, rss));
        drop(server);
    }
    if args.floor {
        let port = match args.port {
            Some(p) => p,
            None => {
                servers::free_port().map_err(|e| BenchError::Other(format!("no free port: {e}")))?
            }
        };
        let echo = echo::EchoServer::start(port, args.server_cpu)
            .map_err(|e| BenchError::Other(format!("cannot start the echo: {e}")))?;
        let m = measure(args, echo.addr, &options, None)?;
        let pin = args
            .server_cpu
            .map_or(String::new(), |c| format!(" on CPU {c}"));
        rows.push(("echo", format!("UDP echo thread{pin}"), m, None));
    }
    let rate = |name: &str| {
        rows.iter()
            .find(|r| r.0 == name)
            .map_or(0.0, |r| r.2.rate())
    };
    let ratio = if rate("libcoap") > 0.0 {
        rate("covey") / rate("libcoap")
    } else {
        f64::NAN
    };
    print_comparison(
        args,
        &options,
        &rows,
        ("ratio_covey_to_libcoap", "covey/libcoap"),
        ratio,
    );
    Ok(())
}

/// One loaded server in a comparison: its name, command line, measurement and RSS.
type Row = (&'static str, String, Measurement, Option<u64>);

/// Prints the rows of a comparison as a table (or JSON) and `ratio` under `label` (its JSON
/// key, its text).
fn print_comparison(
    args: &BenchArgs,
    options: &[(OptionNumber, Vec<u8>)],
    rows: &[Row],
    label: (&str, &str),
    ratio: f64,
) {
    if args.json {
        let servers: Vec<Value> = rows
            .iter()
            .map(|(name, command, m, rss)| {
                let mut v = measurement_json(m);
                v["server"] = json!(name);
                v["server_command"] = json!(command);
                v["server_rss_kib"] = json!(rss);
                v
            })
            .collect();
        let out = json!({
            "setup": setup_json(args, &path_text(options)),
            "servers": servers,
        });
        let mut out = out;
        out[label.0] = if ratio.is_finite() {
            json!(round(ratio, 3))
        } else {
            Value::Null
        };
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return;
    }
    println!(
        "{}",
        setup_text(args, &format!("GET {}", path_text(options)))
    );
    println!(
        "{:<8} {:>12} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>9} {:>8} {:>9}",
        "server",
        if args.handshakes {
            "handshakes/s"
        } else {
            "requests/s"
        },
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "p99.9 µs",
        "retrans",
        "timeouts",
        "RSS KiB",
        "srv CPU",
        "gen idle"
    );
    for (name, _, m, rss) in rows {
        let q = |p: f64| micros(m.latency.value_at_quantile(p));
        println!(
            "{:<8} {:>12.0} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8} {:>8} {:>9} {:>8} {:>8.0}%",
            name,
            m.rate(),
            q(0.5),
            q(0.9),
            q(0.99),
            q(0.999),
            m.retransmissions,
            m.timeouts + m.unanswered,
            rss.map_or("-".to_string(), |r| r.to_string()),
            m.server_cpu_share()
                .map_or("-".to_string(), |c| format!("{:.0}%", 100.0 * c)),
            100.0 * m.generator_idle_share(),
        );
    }
    for (name, command, _, _) in rows {
        println!("  {name}: {command}");
    }
    println!("ratio {}: {ratio:.2}", label.1);
}

/// `covey bench --oscore`: `covey serve` with a context per socket, loaded with plain CoAP
/// and then with OSCORE, in the same run.
fn run_oscore(args: &BenchArgs) -> Result<(), BenchError> {
    if args.sockets > oscore_load::MAX_SOCKETS {
        return Err(BenchError::Usage(format!(
            "--oscore: at most {} sockets (each needs a kid of its own)",
            oscore_load::MAX_SOCKETS
        )));
    }
    if args.dtls.config()?.is_some() || args.floor {
        return Err(BenchError::Usage(
            "--oscore compares plain CoAP with OSCORE: no DTLS, no --floor".into(),
        ));
    }
    let contexts = oscore_load::ServerContexts::write(args.sockets)
        .map_err(|e| BenchError::Other(format!("cannot write the OSCORE contexts: {e}")))?;
    let options = path_options(args, None)?;
    let mut rows: Vec<Row> = Vec::new();
    for (name, oscore) in [("covey", false), ("oscore", true)] {
        // A fresh server for each, as --against starts one per peer.
        let server = start_with(args, ServerKind::Covey, &options, &contexts.serve_flags())?;
        let m = measure_as(args, server.addr, &options, Some(server.pid()), oscore)?;
        if m.completed > 0 && m.error_responses == m.completed {
            return Err(BenchError::Other(format!(
                "{name}: every response was an error; is {} served?",
                path_text(&options)
            )));
        }
        rows.push((name, server.command.clone(), m, server.rss_kib()));
    }
    let ratio = match rows[0].2.rate() {
        plain if plain > 0.0 => rows[1].2.rate() / plain,
        _ => f64::NAN,
    };
    print_comparison(
        args,
        &options,
        &rows,
        ("ratio_oscore_to_plain", "oscore/plain"),
        ratio,
    );
    Ok(())
}

fn run_observers(args: &BenchArgs, count: usize) -> Result<(), BenchError> {
    let (server, remote, options) = if args.serve || args.uri.is_none() {
        let options = path_options(args, None)?;
        let server = start(args, ServerKind::Covey, &options)?;
        let addr = server.addr;
        (Some(server), addr, options)
    } else {
        let uri = args.uri.as_deref().unwrap_or_default();
        let (remote, uri_options) = resolve(uri)?;
        (None, remote, path_options(args, Some(uri_options))?)
    };
    let pid = server.as_ref().map(Spawned::pid).or(args.server_pid);
    let rss_idle = pid.and_then(servers::rss_kib);
    let spec = observers::ObserveSpec {
        remote,
        options: options.clone(),
        count,
        sockets: args.sockets,
        hold: Duration::from_secs_f64(args.duration),
    };
    let mut rss_registered = None;
    let mut rss_held = None;
    let outcome = observers::run(
        &spec,
        |_| rss_registered = pid.and_then(servers::rss_kib),
        |_| rss_held = pid.and_then(servers::rss_kib),
    )
    .map_err(|e| BenchError::Other(format!("observer run failed: {e}")))?;
    if args.json {
        let out = json!({
            "uri": describe(remote, &options),
            "observers_requested": count,
            "sockets": args.sockets,
            "registered": outcome.registered,
            "refused": outcome.refused,
            "failed": outcome.failed,
            "register_seconds": round(outcome.register_time.as_secs_f64(), 3),
            "held_seconds": round(outcome.held.as_secs_f64(), 3),
            "notifications": outcome.notifications,
            "server_rss_kib_idle": rss_idle,
            "server_rss_kib_registered": rss_registered,
            "server_rss_kib_after_hold": rss_held,
            "server_command": server.as_ref().map(|s| s.command.clone()),
        });
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(());
    }
    println!(
        "covey bench: {count} observations of {} from {} sockets",
        describe(remote, &options),
        args.sockets
    );
    if let Some(s) = &server {
        println!("  server: {}", s.command);
    }
    println!(
        "  registered {} (refused {}, failed {}) in {:.2} s",
        outcome.registered,
        outcome.refused,
        outcome.failed,
        outcome.register_time.as_secs_f64()
    );
    println!(
        "  notifications received while holding {:.1} s: {}",
        outcome.held.as_secs_f64(),
        outcome.notifications
    );
    let kib = |v: Option<u64>| v.map_or("unknown".to_string(), |k| format!("{k} KiB"));
    println!(
        "  server RSS: idle {}, with observers {}, after holding {}",
        kib(rss_idle),
        kib(rss_registered),
        kib(rss_held)
    );
    Ok(())
}

/// Starts a server of `kind` for the benchmark.
fn start(
    args: &BenchArgs,
    kind: ServerKind,
    options: &[(OptionNumber, Vec<u8>)],
) -> Result<Spawned, BenchError> {
    start_with(args, kind, options, &[])
}

/// [`start`], with more flags for `covey serve`.
fn start_with(
    args: &BenchArgs,
    kind: ServerKind,
    options: &[(OptionNumber, Vec<u8>)],
    covey_extra: &[String],
) -> Result<Spawned, BenchError> {
    let port = match args.port {
        Some(p) => p,
        None => {
            servers::free_port().map_err(|e| BenchError::Other(format!("no free port: {e}")))?
        }
    };
    let dtls = server_dtls(args)?;
    servers::spawn(
        kind,
        port,
        args.server_cpu,
        args.busy_poll_us,
        options,
        dtls.as_ref(),
        covey_extra,
    )
    .map_err(|e| BenchError::Other(e.to_string()))
}

/// The DTLS flags of the servers the benchmark starts, from its own credentials.
fn server_dtls(args: &BenchArgs) -> Result<Option<ServerDtls>, BenchError> {
    let Some(client) = args.dtls.config()? else {
        return Ok(None);
    };
    let d = &args.dtls;
    let (libcoap, covey) = if let (Some(cert), Some(key)) = (&d.cert, &d.key) {
        let (cert, key) = (cert.display().to_string(), key.display().to_string());
        (
            vec!["-c".into(), cert.clone(), "-j".into(), key.clone()],
            vec!["--cert".into(), cert, "--key".into(), key],
        )
    } else {
        let keys = client.psk.as_ref().map(|k| k.client());
        let Some((identity, key)) = keys else {
            return Ok(None);
        };
        let key = std::str::from_utf8(key).map_err(|_| {
            BenchError::Usage(
                "the servers started by covey bench need a text pre-shared key".into(),
            )
        })?;
        (
            vec!["-k".into(), key.to_string()],
            vec![
                "-u".into(),
                identity.to_string(),
                "-k".into(),
                key.to_string(),
            ],
        )
    };
    Ok(Some(ServerDtls {
        libcoap,
        covey,
        client,
    }))
}

fn measure(
    args: &BenchArgs,
    remote: SocketAddr,
    options: &[(OptionNumber, Vec<u8>)],
    server_pid: Option<u32>,
) -> Result<Measurement, BenchError> {
    measure_as(args, remote, options, server_pid, false)
}

/// [`measure`], with every request protected by OSCORE when `oscore`.
fn measure_as(
    args: &BenchArgs,
    remote: SocketAddr,
    options: &[(OptionNumber, Vec<u8>)],
    server_pid: Option<u32>,
    oscore: bool,
) -> Result<Measurement, BenchError> {
    let spec = LoadSpec {
        remote,
        options: options.to_vec(),
        method: Code::GET,
        confirmable: !args.non,
        sockets: args.sockets,
        window: args.window,
        threads: args.threads,
        duration: Duration::from_secs_f64(args.duration),
        warmup: Duration::from_secs_f64(args.warmup),
        cpu: args.cpu,
        mid_reuse: Duration::from_millis(args.mid_reuse_ms),
        server_pid,
        dtls: args.dtls.config()?,
        oscore,
    };
    let run = if args.handshakes {
        handshakes::run
    } else {
        load::run
    };
    run(&spec).map_err(|e| BenchError::Other(format!("load run failed: {e}")))
}

/// The server address and Uri-* options of `uri`.
fn resolve(uri: &str) -> Result<(SocketAddr, UriOptions), BenchError> {
    let target = covey::client::resolve_blocking(uri)?;
    let options = target
        .options
        .iter()
        .map(|(n, v)| (n, v.to_vec()))
        .collect();
    Ok((target.remote, options))
}

/// The request's options: the URI's, with the path replaced by `--path` (or `/time` on a
/// server the benchmark starts).
fn path_options(
    args: &BenchArgs,
    uri_options: Option<UriOptions>,
) -> Result<UriOptions, BenchError> {
    let path = match (&args.path, &uri_options) {
        (Some(p), _) => Some(p.clone()),
        (None, None) => Some(
            args.uri
                .as_deref()
                .and_then(|u| Uri::parse(u).ok().map(|p| p.path().to_string()))
                .filter(|p| !p.is_empty() && p != "/")
                .unwrap_or_else(|| DEFAULT_PATH.to_string()),
        ),
        (None, Some(_)) => None,
    };
    let mut options = uri_options.unwrap_or_default();
    if let Some(path) = path {
        options.retain(|(n, _)| *n != OptionNumber::URI_PATH);
        for segment in path.split('/').filter(|s| !s.is_empty()) {
            options.push((OptionNumber::URI_PATH, segment.as_bytes().to_vec()));
        }
        options.sort_by_key(|(n, _)| n.0);
    }
    Ok(options)
}

fn path_text(options: &[(OptionNumber, Vec<u8>)]) -> String {
    let segments: Vec<String> = options
        .iter()
        .filter(|(n, _)| *n == OptionNumber::URI_PATH)
        .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        .collect();
    format!("/{}", segments.join("/"))
}

fn describe(remote: SocketAddr, options: &[(OptionNumber, Vec<u8>)]) -> String {
    let host = match remote.ip() {
        IpAddr::V6(v6) => format!("[{v6}]"),
        IpAddr::V4(v4) => v4.to_string(),
    };
    format!("coap://{host}:{}{}", remote.port(), path_text(options))
}

fn micros(nanos: u64) -> f64 {
    nanos as f64 / 1000.0
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

fn setup_json(args: &BenchArgs, target: &str) -> Value {
    json!({
        "target": target,
        "method": "GET",
        "type": if args.non { "NON" } else { "CON" },
        "sockets": args.sockets,
        "window": args.window,
        "threads": args.threads,
        "duration_seconds": args.duration,
        "warmup_seconds": args.warmup,
        "generator_cpu": args.cpu,
        "server_cpu": args.server_cpu,
        "client_mid_reuse_ms": args.mid_reuse_ms,
        "dtls": args.dtls.config().ok().flatten().map(|c| if c.certificate.is_some() { "ecdsa" } else { "psk" }),
        "measured": if args.handshakes { "handshakes" } else { "requests" },
    })
}

fn measurement_json(m: &Measurement) -> Value {
    let q = |p: f64| round(micros(m.latency.value_at_quantile(p)), 2);
    json!({
        "requests_per_second": round(m.rate(), 1),
        "completed": m.completed,
        "error_responses": m.error_responses,
        "retransmissions": m.retransmissions,
        "timeouts": m.timeouts,
        "failures": m.failures,
        "unanswered": m.unanswered,
        "generator_idle_share": round(m.generator_idle_share(), 3),
        "server_cpu_share": m.server_cpu_share().map(|c| round(c, 3)),
        "latency_us": {
            "p50": q(0.5),
            "p90": q(0.9),
            "p99": q(0.99),
            "p99_9": q(0.999),
            "max": round(micros(m.latency.max()), 2),
            "mean": round(m.latency.mean() / 1000.0, 2),
        },
    })
}

fn setup_text(args: &BenchArgs, target: &str) -> String {
    let pin = |cpu: Option<usize>| cpu.map_or("unpinned".to_string(), |c| format!("CPU {c}"));
    format!(
        "covey bench: {target} {}, {} socket(s) x window {}, {} thread(s) on {}, server on {}\n\
         measured {:.1} s after {:.1} s warm-up; client message IDs reused after {} ms \
         (a loopback benchmark: RFC 7252 asks for 247 s)",
        if args.non { "NON" } else { "CON" },
        args.sockets,
        args.window,
        args.threads,
        pin(args.cpu),
        pin(args.server_cpu),
        args.duration,
        args.warmup,
        args.mid_reuse_ms,
    )
}

fn print_single(
    args: &BenchArgs,
    target: &str,
    m: &Measurement,
    rss: Option<u64>,
    command: Option<&str>,
) {
    if args.json {
        let mut v = measurement_json(m);
        v["setup"] = setup_json(args, target);
        v["server_rss_kib"] = json!(rss);
        v["server_command"] = json!(command);
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return;
    }
    println!("{}", setup_text(args, &format!("GET {target}")));
    if let Some(c) = command {
        println!("  server: {c}");
    }
    let q = |p: f64| micros(m.latency.value_at_quantile(p));
    let unit = if args.handshakes {
        "handshakes/s"
    } else {
        "requests/s"
    };
    println!("  {unit:<16} {:.0}", m.rate());
    println!(
        "  completed        {} ({} error responses)",
        m.completed, m.error_responses
    );
    println!("  retransmissions  {}", m.retransmissions);
    println!(
        "  timeouts         {} (failed otherwise {}, unanswered at the end {})",
        m.timeouts, m.failures, m.unanswered
    );
    println!(
        "  latency µs       p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}",
        q(0.5),
        q(0.9),
        q(0.99),
        q(0.999),
        micros(m.latency.max())
    );
    println!(
        "  generator idle   {:.0} % (waiting for the server; near 0 % the generator may be the limit)",
        100.0 * m.generator_idle_share()
    );
    if let Some(share) = m.server_cpu_share() {
        println!("  server CPU       {:.0} % of one core", 100.0 * share);
    }
    if let Some(kib) = rss {
        println!("  server RSS       {kib} KiB");
    }
}
