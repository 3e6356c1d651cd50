//! `covey bench-proxy`: what the gateway's HTTP–CoAP proxy costs. It starts `covey serve`
//! and the proxy on loopback and, in the same run, measures GET /time directly over CoAP
//! and through the proxy over HTTP/1.1 keep-alive: p50/p99 latency one request at a time,
//! then requests/s with `--concurrency` requests outstanding. One JSON object on stdout.

use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use clap::Args;
use covey_core::Code;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::rt::TokioExecutor;
use serde_json::json;

use crate::BenchError;
use covey_web::{
    WebOptions, WebServer, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
};

/// A request unanswered this long fails the run: past MAX_TRANSMIT_WAIT (93 s), when the
/// client gives up on a confirmable request by itself.
const REQUEST_LIMIT: Duration = Duration::from_secs(100);

/// Arguments of `covey bench-proxy`.
#[derive(Debug, Args)]
pub struct BenchProxyArgs {
    /// Seconds of each measurement (latency and throughput, direct and proxied).
    #[arg(long, default_value_t = 3.0, value_name = "SECS")]
    duration: f64,

    /// Requests outstanding at once in the throughput measurement.
    #[arg(long, default_value_t = 32, value_name = "N")]
    concurrency: usize,
}

/// Runs the measurement and prints it.
pub fn run(args: BenchProxyArgs) -> Result<(), BenchError> {
    let duration = Duration::try_from_secs_f64(args.duration)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            usage(format!(
                "--duration wants positive seconds, not {}",
                args.duration
            ))
        })?;
    if !(1..=1024).contains(&args.concurrency) {
        return Err(usage("--concurrency must be 1 to 1024".into()));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| other(format!("cannot start runtime: {e}")))?;
    let mut server = CoapServer::start()?;
    let result = runtime.block_on(measure(server.port, duration, args.concurrency));
    server.stop();
    println!(
        "{}",
        serde_json::to_string_pretty(&result?).unwrap_or_default()
    );
    Ok(())
}

/// `covey serve` on a free loopback port, killed on stop.
struct CoapServer {
    child: Child,
    port: u16,
}

impl CoapServer {
    fn start() -> Result<CoapServer, BenchError> {
        let port = UdpSocket::bind("127.0.0.1:0")
            .and_then(|s| s.local_addr())
            .map_err(|e| other(format!("no free port: {e}")))?
            .port();
        let exe = covey_cli_base::program::program("covey").map_err(|e| other(e.to_string()))?;
        let child = Command::new(exe)
            .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| other(format!("cannot start covey serve: {e}")))?;
        Ok(CoapServer { child, port })
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn measure(
    port: u16,
    duration: Duration,
    concurrency: usize,
) -> Result<serde_json::Value, BenchError> {
    // Both paths use the proxy's client configuration, so they differ only by the proxy;
    // except that message IDs may come round after 100 ms, as `covey bench` lets them: the
    // direct path alone sends more than the 65 536 IDs a second that one second allows.
    let mut config = covey_web::coap_client::config(concurrency);
    config.mid_reuse_interval = Some(covey_proto::Duration::from_millis(100));
    let coap = covey::Client::builder()
        .config(config.clone())
        .build()
        .map_err(|e| other(e.to_string()))?;
    let target = format!("coap://127.0.0.1:{port}/time");
    wait_for(&coap, &target).await?;
    let proxy_client = covey::Client::builder()
        .config(config.clone())
        .build()
        .map_err(|e| other(e.to_string()))?;
    let options = WebOptions {
        em_uri: String::new(),
        max_body: config.max_body_size,
        host_names: Vec::new(),
        // The pooled HTTP client opens up to one connection per outstanding request.
        max_connections: concurrency.max(DEFAULT_MAX_CONNECTIONS),
        // Every connection comes from this host.
        max_connections_per_address: concurrency.max(DEFAULT_MAX_CONNECTIONS),
        header_timeout: DEFAULT_HEADER_TIMEOUT,
        idle_timeout: DEFAULT_IDLE_TIMEOUT,
        proxy_multicast: false,
    };
    let web = WebServer::bind(SocketAddr::from(([127, 0, 0, 1], 0)), proxy_client, options)
        .await
        .map_err(|e| other(format!("cannot listen: {e}")))?;
    let http_addr = web.local_addr().map_err(|e| other(e.to_string()))?;
    web.spawn();
    let http: HttpClient<_, Empty<Bytes>> = HttpClient::builder(TokioExecutor::new()).build_http();
    let url: axum::http::Uri = format!("http://{http_addr}/hc/{target}")
        .parse()
        .map_err(|e| other(format!("{e}")))?;

    let direct = Arc::new(Direct {
        client: coap,
        target,
    });
    let proxied = Arc::new(Proxied { client: http, url });
    // Warm both paths (sockets, connection pool) before measuring.
    run_load(direct.clone(), Duration::from_millis(300), 4).await?;
    run_load(proxied.clone(), Duration::from_millis(300), 4).await?;
    let direct_latency = run_load(direct.clone(), duration, 1).await?;
    let proxy_latency = run_load(proxied.clone(), duration, 1).await?;
    let direct_load = run_load(direct, duration, concurrency).await?;
    let proxy_load = run_load(proxied, duration, concurrency).await?;
    let p50 = |h: &Histogram<u64>| h.value_at_quantile(0.5) as f64 / 1000.0;
    let p99 = |h: &Histogram<u64>| h.value_at_quantile(0.99) as f64 / 1000.0;
    Ok(json!({
        "direct": {
            "p50_us": p50(&direct_latency.latency),
            "p99_us": p99(&direct_latency.latency),
            "requests_per_second": direct_load.rate(),
        },
        "proxy": {
            "p50_us": p50(&proxy_latency.latency),
            "p99_us": p99(&proxy_latency.latency),
            "requests_per_second": proxy_load.rate(),
        },
        "proxy_added_p50_us": p50(&proxy_latency.latency) - p50(&direct_latency.latency),
        "concurrency": concurrency,
        "seconds": duration.as_secs_f64(),
    }))
}

async fn wait_for(coap: &covey::Client, target: &str) -> Result<(), BenchError> {
    for _ in 0..50 {
        let answer = coap
            .request(Code::GET, target)
            .timeout(Duration::from_millis(200))
            .send()
            .await;
        if answer.is_ok() {
            return Ok(());
        }
        // Refused at once (ICMP) while the server is still starting.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(other("covey serve did not answer".into()))
}

/// One way of sending GET /time.
trait Path: Send + Sync + 'static {
    /// What the path is called in errors.
    const NAME: &'static str;

    /// Sends one request; `Err` says why it failed.
    fn once(&self) -> impl std::future::Future<Output = Result<(), String>> + Send;
}

struct Direct {
    client: covey::Client,
    target: String,
}

impl Path for Direct {
    const NAME: &'static str = "direct CoAP";
    async fn once(&self) -> Result<(), String> {
        let r = self
            .client
            .request(Code::GET, self.target.as_str())
            .send()
            .await
            .map_err(|e| e.to_string())?;
        r.is_success()
            .then_some(())
            .ok_or_else(|| format!("{:?}", r.code))
    }
}

struct Proxied {
    client: HttpClient<hyper_util::client::legacy::connect::HttpConnector, Empty<Bytes>>,
    url: axum::http::Uri,
}

impl Path for Proxied {
    const NAME: &'static str = "through the proxy";
    async fn once(&self) -> Result<(), String> {
        let r = self
            .client
            .get(self.url.clone())
            .await
            .map_err(|e| e.to_string())?;
        let ok = r.status().is_success();
        r.into_body().collect().await.map_err(|e| e.to_string())?;
        ok.then_some(()).ok_or_else(|| "HTTP error status".into())
    }
}

/// What one closed-loop run gave.
struct Load {
    latency: Histogram<u64>,
    completed: u64,
    elapsed: Duration,
}

impl Load {
    fn rate(&self) -> f64 {
        self.completed as f64 / self.elapsed.as_secs_f64()
    }
}

/// `workers` loops each sending one request after the other for `duration`.
async fn run_load<P: Path>(
    path: Arc<P>,
    duration: Duration,
    workers: usize,
) -> Result<Load, BenchError> {
    let start = Instant::now();
    let end = start + duration;
    let mut tasks = Vec::with_capacity(workers);
    for _ in 0..workers {
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
                .map_err(|e| e.to_string())?;
            while Instant::now() < end {
                let t = Instant::now();
                tokio::time::timeout(REQUEST_LIMIT, path.once())
                    .await
                    .map_err(|_| format!("no answer within {REQUEST_LIMIT:?}"))??;
                h.saturating_record(t.elapsed().as_nanos() as u64);
            }
            Ok::<_, String>(h)
        }));
    }
    let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|e| other(e.to_string()))?;
    for t in tasks {
        let h = t
            .await
            .map_err(|e| other(e.to_string()))?
            .map_err(|e| other(format!("a request {} failed: {e}", P::NAME)))?;
        latency.add(&h).map_err(|e| other(e.to_string()))?;
    }
    Ok(Load {
        completed: latency.len(),
        latency,
        elapsed: start.elapsed(),
    })
}

fn usage(message: String) -> BenchError {
    BenchError::Usage(message)
}

fn other(message: String) -> BenchError {
    BenchError::Other(message)
}
