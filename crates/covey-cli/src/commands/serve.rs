//! `covey serve`: a CoAP server with the demo resources, optionally the ETSI plugtest set,
//! multicast groups and the `/mc` membership resource, until Ctrl-C or SIGTERM.

use std::net::SocketAddr;

use clap::{ArgAction, Args};
use covey::multicast::parse_group;
use covey::Server;

use crate::exit::{ExitKind, Failure};
use crate::resources;

/// Arguments of `covey serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (repeatable); `[::]` also accepts IPv4.
    #[arg(long, value_name = "ADDR", default_value = "[::]:5683")]
    bind: Vec<SocketAddr>,

    /// Also serve the ETSI CoAP plugtest resources.
    #[arg(long)]
    plugtest: bool,

    /// Join a multicast group, ADDR or ADDR%INTERFACE (repeatable), e.g. ff02::fd%eth0.
    #[arg(long, value_name = "ADDR")]
    group: Vec<String>,

    /// Serve /mc, through which groups are joined and left at run time.
    #[arg(long)]
    mc: bool,

    /// Log more (-v: requests and groups, -vv: every exchange).
    #[arg(short = 'v', long, action = ArgAction::Count)]
    verbose: u8,
}

/// Starts the server and runs until interrupted.
pub fn run(args: ServeArgs) -> Result<(), Failure> {
    crate::logging::init(args.verbose.max(1));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(ExitKind::Other, format!("cannot start runtime: {e}")))?;
    runtime.block_on(serve(args))
}

async fn serve(args: ServeArgs) -> Result<(), Failure> {
    let mut builder = Server::builder();
    for addr in &args.bind {
        builder = builder.bind(*addr);
    }
    for text in &args.group {
        let (group, interface) =
            parse_group(text).map_err(|e| Failure::new(ExitKind::Usage, e.to_string()))?;
        builder = builder.join(group, interface);
    }
    builder = resources::demo::add(builder);
    if args.plugtest {
        builder = resources::plugtest::add(builder);
    }
    let server = builder.membership_resource(args.mc).start()?;
    for addr in server.local_addrs() {
        tracing::info!("listening on {addr}");
    }
    let notifier = tokio::spawn(notify_observers(server.clone(), args.plugtest));
    wait_for_signal().await;
    notifier.abort();
    tracing::info!("shutting down");
    server.shutdown().await;
    Ok(())
}

/// Tells observers about changes: `/time` every second, the sensor every 2 s, the
/// plugtest's `/obs` and `/obs-non` every 5 s.
async fn notify_observers(server: Server, plugtest: bool) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    for n in 0u64.. {
        tick.tick().await;
        let mut paths = vec!["/time"];
        if n % 2 == 0 {
            paths.push("/sensors/temp");
        }
        if plugtest && n % 5 == 0 {
            paths.extend(["/obs", "/obs-non"]);
        }
        for path in paths {
            if let Err(e) = server.notify(path).await {
                tracing::debug!("cannot notify {path}: {e}");
                return;
            }
        }
    }
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
