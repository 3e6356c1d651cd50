//! How much entity creations stall a gateway: one client creates 1 000 entities (8 at a
//! time, each with one member, kept in SQLite) while another asks an unrelated
//! `GET /e/probe/profile` every 2 ms; prints that GET's latency percentiles.
//!
//! `cargo run --release -p covey-group --example get_latency_during_creations [DIR]`
//! (DIR holds the database; it should be on the disk the gateway would use).

use covey::{Client, Code, ContentFormat, Resource, Response, Server};
use covey_group::gateway::{Gateway, Sockets};
use covey_group::{EmConfig, SqliteStore};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ENTITIES: usize = 1000;
const CREATORS: usize = 8;
const PROBE_EVERY: Duration = Duration::from_millis(2);

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let dir = std::env::args().nth(1).map_or_else(
        || std::env::temp_dir().join("covey-get-latency"),
        Into::into,
    );
    let _ = std::fs::remove_dir_all(&dir);
    let store = SqliteStore::create_at(dir.join("entities.db"))?;

    let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
    let member = Server::builder()
        .bind(loopback)
        .resource(
            "/s/t",
            Resource::new().get(|_| async { Response::content(ContentFormat::TEXT_PLAIN, "21.5") }),
        )
        .start()?;
    let member_uri = format!("coap://{}/s/t", member.local_addrs()[0]);
    let em = EmConfig::default();
    let config = em.engine_config();
    let gateway = Gateway::start(Sockets::on(&[loopback]), em, Box::new(store), config)?;
    let base = format!("coap://{}", gateway.driver.local_addrs()[0]);

    create(&Client::new()?, &base, "probe", &member_uri).await?;
    let done = Arc::new(AtomicBool::new(false));
    let probe = tokio::spawn(probe(base.clone(), done.clone()));
    let started = Instant::now();
    let mut creators = Vec::new();
    for c in 0..CREATORS {
        let (base, member_uri) = (base.clone(), member_uri.clone());
        creators.push(tokio::spawn(async move {
            let client = Client::new()?;
            for i in (c..ENTITIES).step_by(CREATORS) {
                create(&client, &base, &format!("e{i}"), &member_uri).await?;
            }
            Ok::<(), Error>(())
        }));
    }
    for c in creators {
        c.await??;
    }
    let creating = started.elapsed();
    done.store(true, Ordering::Relaxed);
    let mut latencies = probe.await??;
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    println!(
        "{ENTITIES} creations in {:.2} s; GET during them: n={} p50={:.2} ms p99={:.2} ms max={:.2} ms",
        creating.as_secs_f64(),
        latencies.len(),
        ms(at(0.5)),
        ms(at(0.99)),
        ms(at(1.0)),
    );
    gateway.driver.shutdown().await;
    member.shutdown().await;
    Ok(())
}

async fn create(client: &Client, base: &str, name: &str, member: &str) -> Result<(), Error> {
    let body = serde_json::json!({"name": name, "er": [member]});
    let r = client
        .request(Code::POST, format!("{base}/e"))
        .content_format(ContentFormat::JSON)
        .payload(body.to_string())
        .send()
        .await?;
    if r.code != Code::CREATED {
        return Err(format!("creating {name}: {}", r.code).into());
    }
    Ok(())
}

/// GETs one profile every [`PROBE_EVERY`] until `done`; the latency of each.
async fn probe(base: String, done: Arc<AtomicBool>) -> Result<Vec<Duration>, Error> {
    let client = Client::new()?;
    let mut latencies = Vec::new();
    while !done.load(Ordering::Relaxed) {
        let t = Instant::now();
        let r = client
            .request(Code::GET, format!("{base}/e/probe/profile"))
            .send()
            .await?;
        latencies.push(t.elapsed());
        if r.code != Code::CONTENT {
            return Err(format!("probe: {}", r.code).into());
        }
        tokio::time::sleep(PROBE_EVERY).await;
    }
    Ok(latencies)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
