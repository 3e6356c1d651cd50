//! Memory of a 1000-node simulation: one server and 999 continuous CoAP clients behind the
//! cc-bottleneck dumbbell, each running 5 exchanges. Prints the resident set size before
//! and after (Linux `/proc/self/statm`).
//! `cargo run --release -p covey-lab --example memory_1000_nodes [-- --default-config]`
//! (`--default-config` gives every node covey-proto's `Config::default()` capacities instead
//! of the lab's small ones).

use covey_lab::scenarios::cc_bottleneck::client::{ClientKind, WorkloadClient};
use covey_lab::scenarios::cc_bottleneck::node::CcNode;
use covey_lab::scenarios::cc_bottleneck::run::{bottleneck, client_config, server_config};
use covey_lab::scenarios::cc_bottleneck::server::ResourceServer;
use covey_lab::scenarios::cc_bottleneck::Params;
use covey_proto::cc::Algorithm;
use covey_proto::{Duration, Instant};
use covey_sim::media::Dumbbell;
use covey_sim::sim::{node_addr, Simulator};

fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn main() {
    const NODES: usize = 1000;
    let default_config = std::env::args().any(|a| a == "--default-config");
    let params = Params::default();
    let before = rss_bytes().unwrap_or(0);
    let clients: Vec<usize> = (1..NODES).collect();
    let medium = Dumbbell::build(&clients, 0, bottleneck(&params), 1);
    let mut sim: Simulator<_, CcNode> = Simulator::new(medium, 1);
    let config = |c: covey_proto::Config| {
        if default_config {
            covey_proto::Config::default()
        } else {
            c
        }
    };
    sim.add_node(
        config(server_config(NODES, params.max_retransmit)),
        CcNode::Server(ResourceServer::default()),
    )
    .expect("valid configuration");
    for _ in 1..NODES {
        let client = WorkloadClient::new(
            ClientKind::Continuous,
            node_addr(0),
            5,
            Duration::from_secs(10),
        );
        sim.add_node(
            config(client_config(Algorithm::Cocoa, params.max_retransmit)),
            CcNode::Client(client),
        )
        .expect("valid configuration");
    }
    let built = rss_bytes().unwrap_or(0);
    let started = std::time::Instant::now();
    let finished = sim.run_until(Instant::from_secs(24 * 3600));
    let wall = started.elapsed();
    let after = rss_bytes().unwrap_or(0);
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    println!(
        "nodes: {NODES} ({} capacities), all finished: {finished}",
        if default_config {
            "Config::default()"
        } else {
            "lab"
        }
    );
    println!("RSS before: {:.1} MiB", mib(before));
    println!(
        "RSS with {NODES} nodes built: {:.1} MiB (+{:.1} MiB, {:.1} KiB per node)",
        mib(built),
        mib(built - before),
        (built - before) as f64 / 1024.0 / NODES as f64
    );
    println!(
        "RSS after {:.0} s of virtual time: {:.1} MiB (+{:.1} MiB over the start)",
        sim.now().as_nanos() as f64 / 1e9,
        mib(after),
        mib(after.saturating_sub(before))
    );
    println!(
        "{} simulator steps, {} link events in {:.2} s wall",
        sim.stats().steps,
        sim.medium().events(),
        wall.as_secs_f64()
    );
    // For comparison: one endpoint with covey-proto's default capacities.
    let base = rss_bytes().unwrap_or(0);
    let default = covey_proto::Endpoint::new(covey_proto::Config::default(), 1)
        .expect("the default Config is valid");
    let grown = rss_bytes().unwrap_or(0);
    println!(
        "one Endpoint with Config::default(): +{:.2} MiB RSS",
        mib(grown.saturating_sub(base))
    );
    drop(default);
}
