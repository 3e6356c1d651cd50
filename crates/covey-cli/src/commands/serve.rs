//! `covey serve`: a CoAP server with the demo resources, optionally the ETSI plugtest set,
//! multicast groups and the `/mc` membership resource, until Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args};
use covey::multicast::parse_group;
use covey::server::ServerBuilder;
use covey::Server;

use super::dtls_args::{listen, log_listening, ClientCertificateArgs, DtlsArgs};
use crate::exit::{ExitKind, Failure};
use covey_demo::demo::DemoApp;
use covey_demo::plugtest::PlugtestApp;

mod tuning;

/// Arguments of `covey serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (repeatable), coaps with DTLS keys; `[::]` also accepts IPv4
    /// [default: [::]:5683, or with DTLS keys [::]:5684 and [::]:5683 in plain coap].
    #[arg(long, value_name = "ADDR")]
    bind: Vec<SocketAddr>,

    /// With DTLS keys, also listen on this address in plain coap (repeatable).
    #[arg(long, value_name = "ADDR")]
    bind_plain: Vec<SocketAddr>,

    /// Also serve the ETSI CoAP plugtest resources.
    #[arg(long)]
    plugtest: bool,

    /// How often the plugtest's /obs and /obs-non change and notify their observers.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    obs_period: f64,

    /// ACK_TIMEOUT of the confirmable messages the server sends (separate responses,
    /// notifications); RFC 7252's default is 2.
    #[arg(long, value_name = "SECS")]
    ack_timeout: Option<f64>,

    /// Join a multicast group, ADDR or ADDR%INTERFACE (repeatable), e.g. ff02::fd%eth0.
    #[arg(long, value_name = "ADDR")]
    group: Vec<String>,

    /// Serve /mc, through which groups are joined and left at run time (by clients on this
    /// host only, unless --policy or --open-management says otherwise).
    #[arg(long)]
    mc: bool,

    #[command(flatten)]
    management: super::management::ManagementArgs,

    /// After datagrams arrive, keep polling the socket up to this many microseconds before
    /// sleeping: a few µs instead of a wake-up per request under steady load. Adaptive: a
    /// spin that catches nothing turns it off until requests come that close again (0: off).
    #[arg(long, value_name = "MICROS", default_value_t = 50)]
    busy_poll_us: u64,

    /// Largest request body accepted block-wise (Block1), in bytes; larger ones get 4.13
    /// with the limit in Size1.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    max_body_size: usize,

    /// Let other servers started with --reuse-port bind the same port (e.g. several multicast
    /// servers on one host); without it a busy port is an error.
    #[arg(long)]
    reuse_port: bool,

    /// Against amplification: an address not yet verified gets at most this many times the
    /// bytes it sent (RFC 9175, RFC 9000 §8.1); 0: off.
    #[arg(long, value_name = "FACTOR", default_value_t = 3)]
    amplification_factor: u32,

    /// Log more (-v: one line per request, -vv: every datagram too).
    #[arg(short = 'v', long, action = ArgAction::Count)]
    verbose: u8,

    /// DTLS credentials: with them the server speaks coaps:// on --bind (and plain coap on
    /// --bind-plain).
    #[command(flatten)]
    dtls: DtlsArgs,

    #[command(flatten)]
    client_certificates: ClientCertificateArgs,

    /// Serve OSCORE-protected requests (RFC 8613) with the security context in DIR, in
    /// aiocoap's layout: settings.json and secret.json (repeatable, one per client).
    #[arg(long, value_name = "DIR")]
    oscore: Vec<PathBuf>,

    /// Answer EDHOC (RFC 9528) at /.well-known/edhoc with this server's credential and the
    /// trusted clients' in DIR/edhoc.json; each handshake adds an OSCORE context, under which
    /// that client's requests carry the identity edhoc:KID.
    #[arg(long, value_name = "DIR")]
    edhoc: Option<PathBuf>,
}

/// EDHOC sessions waiting for message_3 at once; a flood beyond gets 5.03.
const EDHOC_SESSIONS: usize = 16;
/// OSCORE contexts EDHOC may add: one per one-byte connection identifier (-24..=23).
const EDHOC_CONTEXTS: usize = 48;

/// Starts the server and runs until interrupted.
pub fn run(args: ServeArgs) -> Result<(), Failure> {
    crate::logging::init(args.verbose.max(1));
    // One thread: the engine lives in one driver task anyway, and the handlers are short, so
    // a second worker would only add cross-thread wake-ups to every request.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(ExitKind::Other, format!("cannot start runtime: {e}")))?;
    runtime.block_on(serve(args))
}

async fn serve(args: ServeArgs) -> Result<(), Failure> {
    let obs_period = seconds("--obs-period", args.obs_period)?;
    let mut config = tuning::config();
    if let Some(secs) = args.ack_timeout {
        config.transmission.ack_timeout = seconds("--ack-timeout", secs)?;
    }
    if args.max_body_size == 0 {
        return Err(Failure::new(
            ExitKind::Usage,
            "--max-body-size must be at least 1",
        ));
    }
    config.max_body_size = args.max_body_size;
    config.amplification = super::amplification::limit(args.amplification_factor);
    // All uploads under way together must hold at least one of the largest.
    config.max_reassembly_bytes = config.max_reassembly_bytes.max(args.max_body_size);
    let oscore = args
        .oscore
        .iter()
        .map(|dir| Ok((super::oscore_dir::load_for_serving(dir)?, dir)))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| Failure::new(ExitKind::Usage, e))?;
    config.max_oscore_contexts = config.max_oscore_contexts.max(oscore.len());
    let edhoc = match &args.edhoc {
        Some(dir) => {
            let (own, trusted) = covey_edhoc::credential_dir::load(dir)
                .map_err(|e| Failure::new(ExitKind::Usage, e.to_string()))?;
            config.max_oscore_contexts = oscore.len() + EDHOC_CONTEXTS;
            Some(covey_proto::EdhocConfig {
                own,
                trusted,
                max_sessions: EDHOC_SESSIONS,
            })
        }
        None => None,
    };
    let mut builder = Server::builder()
        .config(config)
        .busy_poll(Duration::from_micros(args.busy_poll_us))
        .share_port(args.reuse_port);
    if let Some(trace) = super::request_log::tracer(args.verbose) {
        builder = builder.trace(trace);
    }
    let dtls = args.client_certificates.apply(args.dtls.config()?)?;
    let secured = dtls.is_some();
    if let Some(dtls) = dtls {
        builder = builder.dtls(dtls);
    }
    let listen = listen(&args.bind, &args.bind_plain, secured)?;
    for addr in &listen.binds {
        builder = match secured {
            true => builder.bind_secure(*addr),
            false => builder.bind(*addr),
        };
    }
    for addr in &listen.plain {
        builder = builder.bind(*addr);
    }
    for text in &args.group {
        let (group, interface) =
            parse_group(text).map_err(|e| Failure::new(ExitKind::Usage, e.to_string()))?;
        builder = builder.join(group, interface);
    }
    for (context, dir) in oscore {
        tracing::info!(
            "OSCORE: serving kid {} (requests name the identity oscore:{})",
            hex(context.recipient_id()),
            hex(context.recipient_id())
        );
        let reserve = super::oscore_dir::keep_reserving(dir);
        builder = builder.oscore_context_reserving(context, reserve);
    }
    if let Some(edhoc) = edhoc {
        tracing::info!(
            "EDHOC: answering at /.well-known/edhoc as kid {}",
            edhoc.own.kid()
        );
        builder = builder.edhoc(edhoc);
    }
    builder = add_resources(builder, args.plugtest, obs_period);
    if args.management.given() && !args.mc {
        return Err(Failure::new(
            ExitKind::Usage,
            "--policy and --open-management govern /mc: add --mc",
        ));
    }
    let mc_access = if args.mc {
        let access =
            args.management
                .access(secured, args.client_certificates.given(), &args.bind)?;
        builder = builder
            .app(Box::new(covey_group::GroupMembershipResource::with_access(
                access.clone(),
            )))
            .app_link(covey_group::membership_resource::MC_LINK);
        Some(access)
    } else {
        None
    };
    let server = builder.start().map_err(super::start_error::start_failure)?;
    log_listening(server.driver());
    if let Some(access) = mc_access {
        tracing::info!("{}", access.describe("/mc (joining and leaving groups)"));
    }
    super::signal::wait_for_signal().await;
    tracing::info!("shutting down");
    server.shutdown().await;
    Ok(())
}

/// Hosts the demo resources and, with `plugtest`, the ETSI plugtest set (offered requests
/// first, so its `/large` replaces the demo's), and lists them in `/.well-known/core`.
fn add_resources(
    mut builder: ServerBuilder,
    plugtest: bool,
    obs_period: Duration,
) -> ServerBuilder {
    let clock = || Box::new(covey_demo::wall_clock::SystemClock);
    let plugtest_links = if plugtest {
        builder = builder.app(Box::new(PlugtestApp::new(obs_period, clock())));
        covey_demo::plugtest::links(obs_period)
    } else {
        Vec::new()
    };
    builder = builder.app(Box::new(DemoApp::new(clock())));
    let shadowed = |link: &str| {
        plugtest_links
            .iter()
            .any(|p| link_path(p) == link_path(link))
    };
    for link in covey_demo::demo::LINKS {
        if !shadowed(link) {
            builder = builder.app_link(link);
        }
    }
    for link in &plugtest_links {
        builder = builder.app_link(link);
    }
    builder
}

/// The target of a link-format entry: `/a` of `</a>;rt=...`.
fn link_path(link: &str) -> &str {
    link.split_once('>').map_or(link, |(target, _)| target)
}

/// A positive, finite number of seconds given for `flag`.
fn seconds(flag: &str, secs: f64) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            Failure::new(
                ExitKind::Usage,
                format!("{flag} wants a positive number of seconds, not {secs}"),
            )
        })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
