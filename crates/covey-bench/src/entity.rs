//! `covey entity bench`: the Entity Manager's fan-out throughput and latency on loopback.
//! One process, three threads: G minimal CoAP members (one UDP socket each, answering any
//! GET with a piggy-backed 2.05 "21.5"), a gateway (the EM on its tokio driver, as
//! `covey gateway` runs it, entities in memory), and closed-loop clients that query one
//! G-member entity (`eo=avg`) as fast as it answers. Reported per G and concurrency:
//! queries/s, latency p50/p99, and the cost per member reply, by wall clock and by the EM
//! thread's CPU time.

mod members;
mod runtime_thread;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use clap::Args;
use covey::{Client, ClientBuilder, Code, Config, ContentFormat};
use covey_group::gateway::{Gateway, Sockets};
use covey_group::{EmConfig, MemoryStore};
use hdrhistogram::Histogram;
use serde_json::json;

use crate::BenchError;
use covey_cli_base::output::print;
use covey_core::uri::SocketAuthority;
use runtime_thread::RuntimeThread;

/// The name the EM's thread carries, to find its CPU time in `/proc`.
const EM_THREAD: &str = "covey-em";
/// The name of the members' thread.
const MEMBERS_THREAD: &str = "covey-members";

/// Arguments of `covey entity bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Group sizes G to measure (comma-separated).
    #[arg(
        long,
        value_name = "G,...",
        value_delimiter = ',',
        default_value = "10,100,1000"
    )]
    members: Vec<usize>,

    /// Queries in flight at once (closed loop), one run per value.
    #[arg(
        long,
        value_name = "C,...",
        value_delimiter = ',',
        default_value = "1,8"
    )]
    concurrency: Vec<usize>,

    /// Seconds measured per run.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    seconds: f64,

    /// Seconds of warm-up before each run.
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    warmup: f64,

    /// Message type towards the members: con or non.
    #[arg(long, value_name = "TYPE", default_value = "con")]
    emt: String,

    /// Print one JSON object per run instead of the table.
    #[arg(long)]
    json: bool,
}

/// One run's figures.
#[derive(Debug, Clone)]
struct RunResult {
    members: usize,
    concurrency: usize,
    queries: u64,
    errors: u64,
    elapsed: Duration,
    histogram: Histogram<u64>,
    em_cpu: Option<Duration>,
    members_cpu: Option<Duration>,
}

impl RunResult {
    fn qps(&self) -> f64 {
        self.queries as f64 / self.elapsed.as_secs_f64()
    }

    fn to_json(&self) -> serde_json::Value {
        let member_replies = self.queries as f64 * self.members as f64;
        json!({
            "members": self.members,
            "concurrency": self.concurrency,
            "queries": self.queries,
            "errors": self.errors,
            "seconds": self.elapsed.as_secs_f64(),
            "queries_per_s": round(self.qps(), 1),
            "p50_ms": round(self.histogram.value_at_quantile(0.5) as f64 / 1000.0, 3),
            "p99_ms": round(self.histogram.value_at_quantile(0.99) as f64 / 1000.0, 3),
            "max_ms": round(self.histogram.max() as f64 / 1000.0, 3),
            "member_replies_per_s": round(member_replies / self.elapsed.as_secs_f64(), 0),
            "wall_us_per_member_reply": round(self.elapsed.as_secs_f64() * 1e6 / member_replies.max(1.0), 3),
            "em_cpu_us_per_member_reply": self.em_cpu.map(|c| round(c.as_secs_f64() * 1e6 / member_replies.max(1.0), 3)),
            "members_cpu_us_per_member_reply": self.members_cpu.map(|c| round(c.as_secs_f64() * 1e6 / member_replies.max(1.0), 3)),
        })
    }

    fn row(&self) -> String {
        let v = self.to_json();
        let f = |k: &str| match v[k].as_f64() {
            Some(x) => format!("{x}"),
            None => "-".into(),
        };
        format!(
            "{:>5} {:>3} {:>8} {:>9} {:>8} {:>8} {:>12} {:>10} {:>10} {:>6}\n",
            self.members,
            self.concurrency,
            self.queries,
            f("queries_per_s"),
            f("p50_ms"),
            f("p99_ms"),
            f("member_replies_per_s"),
            f("wall_us_per_member_reply"),
            f("em_cpu_us_per_member_reply"),
            self.errors
        )
    }
}

const HEADER: &str =
    "    G   C  queries  queries/s  p50 ms   p99 ms  replies/s  wall us/r  EM cpu us/r errors\n";

fn round(x: f64, digits: i32) -> f64 {
    let p = 10f64.powi(digits);
    (x * p).round() / p
}

fn usage(message: impl Into<String>) -> BenchError {
    BenchError::Usage(message.into())
}

fn other(message: impl Into<String>) -> BenchError {
    BenchError::Other(message.into())
}

/// Runs the benchmark.
pub fn run(args: BenchArgs) -> Result<(), BenchError> {
    let largest = args.members.iter().copied().max().unwrap_or(0);
    if largest == 0 || args.members.contains(&0) || largest > EmConfig::default().max_members {
        return Err(usage(format!(
            "--members wants group sizes from 1 to {}",
            EmConfig::default().max_members
        )));
    }
    if args.concurrency.is_empty() || args.concurrency.iter().any(|c| !(1..=64).contains(c)) {
        return Err(usage("--concurrency wants values from 1 to 64"));
    }
    let measure = Duration::try_from_secs_f64(args.seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| usage("--seconds must be positive"))?;
    let warmup = Duration::try_from_secs_f64(args.warmup)
        .map_err(|_| usage("--warmup must be a number of seconds"))?;
    if !matches!(args.emt.as_str(), "con" | "non") {
        return Err(usage("--emt is con or non"));
    }

    let members = members::Members::start(largest, MEMBERS_THREAD)?;
    let gateway = GatewayThread::start()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| other(format!("cannot start runtime: {e}")))?;
    if !args.json {
        print(&format!(
            "EM fan-out on loopback: gateway {}, emt={}, delay 0, eo=avg, {} s per run after {} s warm-up\n{HEADER}",
            SocketAuthority(gateway.addr),
            args.emt,
            args.seconds,
            args.warmup
        ))?;
    }
    let result = runtime.block_on(async {
        for &g in &args.members {
            let base = format!("coap://{}", SocketAuthority(gateway.addr));
            let name = format!("bench-{g}");
            create(&base, &name, &members.addrs[..g], &args.emt).await?;
            for &c in &args.concurrency {
                let r = measure_run(&base, &name, g, c, warmup, measure).await?;
                if args.json {
                    print(&format!("{}\n", r.to_json()))?;
                } else {
                    print(&r.row())?;
                }
            }
            delete(&base, &name).await?;
        }
        Ok::<(), BenchError>(())
    });
    gateway.stop();
    members.stop();
    result
}

/// The gateway on a thread of its own.
struct GatewayThread {
    addr: SocketAddr,
    thread: RuntimeThread,
}

impl GatewayThread {
    fn start() -> Result<GatewayThread, BenchError> {
        let (thread, addr) = RuntimeThread::start(
            EM_THREAD,
            "the gateway thread",
            |ready_tx, stop_rx| async move {
                // One client measures the EM's capacity: its rate of member requests
                // is not limited (a gateway limits each client to 2 048 a second).
                let em = EmConfig {
                    client_rate: u32::MAX,
                    ..EmConfig::default()
                };
                let config = em.engine_config();
                let bind = SocketAddr::from(([127, 0, 0, 1], 0));
                match Gateway::start(
                    Sockets::on(&[bind]),
                    em,
                    Box::new(MemoryStore::new()),
                    config,
                ) {
                    Ok(g) => {
                        let _ = ready_tx.send(Ok(g.driver.local_addrs()[0]));
                        let _ = stop_rx.await;
                        g.driver.shutdown().await;
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(BenchError::Gateway(e)));
                    }
                }
            },
        )?;
        Ok(GatewayThread { addr, thread })
    }

    fn stop(self) {
        self.thread.stop();
    }
}

fn client(nstart: usize) -> Result<Client, BenchError> {
    let mut config = Config::default();
    config.transmission.nstart = nstart.max(1);
    Ok(ClientBuilder::new().config(config).build()?)
}

async fn create(
    base: &str,
    name: &str,
    members: &[SocketAddr],
    emt: &str,
) -> Result<(), BenchError> {
    let er: Vec<String> = members
        .iter()
        .map(|a| format!("coap://{}/s/t", SocketAuthority(*a)))
        .collect();
    let body = json!({"name": name, "er": er, "emt": emt, "eo": ["avg", "lst"], "delay": 0});
    let c = client(1)?;
    let r = c
        .request(Code::POST, format!("{base}/e"))
        .content_format(ContentFormat::JSON)
        .payload(body.to_string())
        .timeout(Duration::from_secs(60))
        .send()
        .await?;
    c.shutdown().await;
    if r.code != Code::CREATED {
        return Err(other(format!(
            "creating {name}: {} {}",
            r.code,
            r.payload_text()
        )));
    }
    Ok(())
}

async fn delete(base: &str, name: &str) -> Result<(), BenchError> {
    let c = client(1)?;
    let r = c
        .request(Code::DELETE, format!("{base}/e/{name}"))
        .timeout(Duration::from_secs(60))
        .send()
        .await?;
    c.shutdown().await;
    if r.code != Code::DELETED {
        return Err(other(format!("deleting {name}: {}", r.code)));
    }
    Ok(())
}

/// What one closed-loop worker saw.
struct WorkerResult {
    queries: u64,
    errors: u64,
    histogram: Histogram<u64>,
}

async fn measure_run(
    base: &str,
    name: &str,
    members: usize,
    concurrency: usize,
    warmup: Duration,
    measure: Duration,
) -> Result<RunResult, BenchError> {
    let uri = format!("{base}/e/{name}");
    let expected = format!("answered: {members} of {members}");
    let start = tokio::time::Instant::now() + Duration::from_millis(50);
    let measure_from = start + warmup;
    let end = measure_from + measure;
    let mut workers = Vec::with_capacity(concurrency);
    // One client whose NSTART lets every worker's query be in flight at once.
    let shared = client(concurrency)?;
    for _ in 0..concurrency {
        let c = shared.clone();
        let uri = uri.clone();
        let expected = expected.clone();
        workers.push(tokio::spawn(async move {
            let mut out = WorkerResult {
                queries: 0,
                errors: 0,
                histogram: Histogram::new_with_bounds(1, 60_000_000, 3)
                    .expect("histogram bounds are valid"),
            };
            tokio::time::sleep_until(start).await;
            loop {
                let sent = tokio::time::Instant::now();
                if sent >= end {
                    break;
                }
                let r = c
                    .request(Code::GET, uri.clone())
                    .timeout(Duration::from_secs(30))
                    .send()
                    .await;
                let done = tokio::time::Instant::now();
                if sent < measure_from || done > end {
                    continue;
                }
                let ok = matches!(&r, Ok(r) if r.code == Code::CONTENT && r.payload_text().contains(&expected));
                if ok {
                    out.queries += 1;
                    let us = (done - sent).as_micros().max(1) as u64;
                    let _ = out.histogram.record(us.min(60_000_000));
                } else {
                    out.errors += 1;
                }
            }
            out
        }));
    }
    tokio::time::sleep_until(measure_from).await;
    let em_before = thread_cpu(EM_THREAD);
    let members_before = thread_cpu(MEMBERS_THREAD);
    let wall = Instant::now();
    tokio::time::sleep_until(end).await;
    let elapsed = wall.elapsed();
    let em_cpu = em_before
        .zip(thread_cpu(EM_THREAD))
        .map(|(a, b)| b.saturating_sub(a));
    let members_cpu = members_before
        .zip(thread_cpu(MEMBERS_THREAD))
        .map(|(a, b)| b.saturating_sub(a));
    let mut result = RunResult {
        members,
        concurrency,
        queries: 0,
        errors: 0,
        elapsed,
        histogram: Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid bounds"),
        em_cpu,
        members_cpu,
    };
    for w in workers {
        let w = w
            .await
            .map_err(|e| other(format!("a bench client failed: {e}")))?;
        result.queries += w.queries;
        result.errors += w.errors;
        let _ = result.histogram.add(&w.histogram);
    }
    shared.shutdown().await;
    Ok(result)
}

/// CPU time (user + system) of this process's thread called `name`, from
/// `/proc/self/task/*/stat` (in USER_HZ = 100 ticks per second).
fn thread_cpu(name: &str) -> Option<Duration> {
    for entry in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
        // Fields after the command name (which may hold spaces) in parentheses.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // utime and stime are fields 14 and 15 of the line: 12 and 13 after `state`.
        let utime: u64 = fields.get(11)?.parse().ok()?;
        let stime: u64 = fields.get(12)?.parse().ok()?;
        return Some(Duration::from_millis((utime + stime) * 10));
    }
    None
}
