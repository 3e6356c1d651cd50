//! `covey gateway`: a CoAP server whose resources are the Entity Manager's (`/e`,
//! `/e/<name>`, `/e/<name>/profile`, `/.well-known/core`), entities kept in SQLite, until
//! Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{ArgAction, Args};
use covey_core::uri::SocketAuthority;
use covey_group::authorization::Access;
use covey_group::gateway::{Gateway, GatewayError, Sockets};
use covey_group::{EmConfig, GroupPool, SqliteStore};

use super::dtls_args::{listen, log_listening, ClientCertificateArgs, DtlsArgs};
use crate::exit::{ExitKind, Failure};
use covey_web::{
    WebOptions, WebServer, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
};

/// Arguments of `covey gateway`.
#[derive(Debug, Args)]
pub struct GatewayArgs {
    /// Address to listen on (repeatable), coaps with DTLS keys; `[::]` also accepts IPv4.
    /// Port 0 picks a free port [default: [::]:5683, or with DTLS keys [::]:5684 and
    /// [::]:5683 in plain coap].
    #[arg(long, value_name = "ADDR")]
    bind: Vec<SocketAddr>,

    /// With DTLS keys, also listen on this address in plain coap (repeatable); the EM
    /// reaches coap:// members from it and coaps:// members over DTLS.
    #[arg(long, value_name = "ADDR")]
    bind_plain: Vec<SocketAddr>,

    /// The entity database (SQLite, created if missing) [default:
    /// $XDG_DATA_HOME/covey/entities.db, else ~/.local/share/covey/entities.db]
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,

    /// Group addresses for multicast entities: a multicast IPv6 prefix of length 112 to 127.
    #[arg(long, value_name = "PREFIX", default_value = "ff1e::89:0/112")]
    group_pool: String,

    /// Target data rate R towards the members, bytes/s, for delay=auto (D = S·G / (R·(G−1))).
    #[arg(long, value_name = "BYTES_PER_S", default_value_t = 1000)]
    target_rate: u32,

    /// Another address clients reach this gateway at (repeatable), e.g. behind a NAT. The
    /// bound addresses (every interface address for a wildcard bind) are always included;
    /// the first address given names the entities in replies.
    #[arg(long, value_name = "ADDR")]
    authority: Vec<SocketAddr>,

    /// How long a member may take to answer a query before it counts as missing.
    #[arg(long, value_name = "SECS", default_value_t = 50.0)]
    member_timeout: f64,

    /// How long every member has to answer the checks when an entity is created.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    validation_timeout: f64,

    /// How long a query of a multicast entity collects replies: the members' leisure (a
    /// margin of 2 s is added).
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    multicast_leisure: f64,

    /// ACK_TIMEOUT of the confirmable requests to the members; RFC 7252's default is 2.
    #[arg(long, value_name = "SECS")]
    ack_timeout: Option<f64>,

    /// NSTART: requests outstanding at once towards one member node, and from the HTTP
    /// proxy towards one CoAP server (RFC 7252's default is 1; members on distinct nodes are
    /// asked in parallel anyway).
    #[arg(long, value_name = "N", default_value_t = 1)]
    nstart: usize,

    /// Most member requests one query may cause, nested entities included (beyond: 4.00).
    #[arg(long, value_name = "N", default_value_t = EmConfig::default().query_budget)]
    query_budget: usize,

    /// Member requests each client (an IPv4 address or an IPv6 /64) may cause per second
    /// (beyond: 5.03 with Max-Age).
    #[arg(long, value_name = "N", default_value_t = EmConfig::default().client_rate)]
    client_rate: u32,

    /// Most member requests in flight for the queries of one entity, so a dead entity
    /// cannot hold every exchange (beyond: 5.03 with Max-Age).
    #[arg(long, value_name = "N", default_value_t = EmConfig::default().entity_share)]
    entity_share: usize,

    /// Most member requests in flight for the queries of one client address, and twice
    /// that for its IPv4 /24 or IPv6 /64, so one client keeping silent entities in flight
    /// cannot hold every exchange (beyond: 5.03 with Max-Age).
    #[arg(long, value_name = "N", default_value_t = EmConfig::default().client_share)]
    client_share: usize,

    /// Let other servers started with --reuse-port bind the same port; without it a busy
    /// port is an error.
    #[arg(long)]
    reuse_port: bool,

    /// Against amplification: an address not yet verified gets at most this many times the
    /// bytes it sent (RFC 9175, RFC 9000 §8.1), and its entity queries are answered 4.01
    /// with Echo until it repeats them with the value; 0: off.
    #[arg(long, value_name = "FACTOR", default_value_t = 3)]
    amplification_factor: u32,

    /// Where the web console and the HTTP-CoAP proxy (/hc/) listen. Loopback by default:
    /// anyone who reaches it can create and delete entities.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    http: SocketAddr,

    /// Serve no web console and no HTTP-CoAP proxy.
    #[arg(long, conflicts_with = "http")]
    no_http: bool,

    #[command(flatten)]
    management: super::management::ManagementArgs,

    /// A host name the web console answers to besides its address and localhost (say, the
    /// gateway's DNS name); repeat for more. Requests naming other hosts are refused, so a
    /// site whose name was rebound to this address cannot use the console.
    #[arg(long, value_name = "NAME", action = ArgAction::Append)]
    http_allow_host: Vec<String>,

    /// HTTP connections served at once; further clients wait until one closes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS)]
    http_max_connections: usize,

    /// HTTP connections served at once from one client address (an IPv6 /64); its further
    /// connections get 503, so one client cannot make the others wait.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS_PER_ADDRESS)]
    http_max_connections_per_address: usize,

    /// Seconds a client has to send a request's head (request line and headers) once it
    /// has started; a slower one is disconnected.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_HEADER_TIMEOUT.as_secs_f64())]
    http_header_timeout: f64,

    /// Seconds an HTTP connection may stay open with no request in progress.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_IDLE_TIMEOUT.as_secs_f64())]
    http_idle_timeout: f64,

    /// Let the HTTP-CoAP proxy send to multicast groups (a request to a group is answered
    /// with the first response); without it such targets get 403.
    #[arg(long)]
    http_proxy_multicast: bool,

    /// Log more (-v: one line per request, -vv: every datagram too).
    #[arg(short = 'v', long, action = ArgAction::Count)]
    verbose: u8,

    /// DTLS credentials: with them the gateway speaks coaps:// on --bind (and plain coap on
    /// --bind-plain), and presents them to coaps:// members.
    #[command(flatten)]
    dtls: DtlsArgs,

    #[command(flatten)]
    client_certificates: ClientCertificateArgs,

    /// Verify OSCORE-protected requests (RFC 8613) with the security context in DIR and
    /// protect their answers, in aiocoap's layout: settings.json and secret.json (repeatable,
    /// one per client; the policy names such a client oscore:KID).
    #[arg(long, value_name = "DIR")]
    oscore: Vec<PathBuf>,

    /// Protect requests to the member at ADDR (IP:port) with the OSCORE context in DIR, the
    /// EM's side (aiocoap's layout), and verify its answers; repeatable, one per member. A
    /// member with a context is never asked in the clear.
    #[arg(long, value_name = "ADDR=DIR", value_parser = member_context)]
    member_oscore: Vec<(SocketAddr, PathBuf)>,
}

/// `ADDR=DIR` of `--member-oscore`.
fn member_context(text: &str) -> Result<(SocketAddr, PathBuf), String> {
    let (addr, dir) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} is not ADDR=DIR"))?;
    let addr = addr
        .parse::<SocketAddr>()
        .map_err(|_| format!("{addr:?} is not an IP address and port, e.g. [2001:db8::1]:5683"))?;
    Ok((addr, PathBuf::from(dir)))
}

/// Starts the gateway and runs until interrupted.
pub fn run(args: GatewayArgs) -> Result<(), Failure> {
    crate::logging::init(args.verbose.max(1));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(ExitKind::Other, format!("cannot start runtime: {e}")))?;
    runtime.block_on(serve(args))
}

async fn serve(args: GatewayArgs) -> Result<(), Failure> {
    let dtls = args.client_certificates.apply(args.dtls.config()?)?;
    let mut em = EmConfig {
        group_pool: args.group_pool.parse::<GroupPool>().map_err(usage)?,
        target_rate: args.target_rate,
        member_timeout: seconds("--member-timeout", args.member_timeout)?,
        validation_timeout: seconds("--validation-timeout", args.validation_timeout)?,
        multicast_leisure: seconds("--multicast-leisure", args.multicast_leisure)?,
        query_budget: args.query_budget,
        client_rate: args.client_rate,
        entity_share: args.entity_share,
        client_share: args.client_share,
        access: args.management.access(
            dtls.is_some(),
            args.client_certificates.given(),
            &args.bind,
        )?,
        ..EmConfig::default()
    };
    for (member, dir) in &args.member_oscore {
        let context = super::oscore_dir::load_for_service(dir)
            .map_err(|e| usage(e.replacen("--oscore", "--member-oscore", 1)))?;
        tracing::info!(
            "OSCORE: requests to member {member} protected as kid {}",
            hex(context.sender_id())
        );
        em.member_oscore.push((*member, context));
        let reserve = super::oscore_dir::keep_reserving(dir);
        em.member_reservations
            .push((*member, covey_group::MemberReservation::new(reserve)));
    }
    if args.target_rate == 0 {
        return Err(usage("--target-rate must be at least 1 byte/s"));
    }
    if !(1..=65_536).contains(&args.http_max_connections) {
        return Err(usage("--http-max-connections must be 1 to 65536"));
    }
    if !(1..=65_536).contains(&args.http_max_connections_per_address) {
        return Err(usage(
            "--http-max-connections-per-address must be 1 to 65536",
        ));
    }
    http_seconds("--http-header-timeout", args.http_header_timeout)?;
    http_seconds("--http-idle-timeout", args.http_idle_timeout)?;
    if !(1..=64).contains(&args.nstart) {
        return Err(usage("--nstart must be 1 to 64"));
    }
    let oscore = args
        .oscore
        .iter()
        .map(|dir| {
            let context = super::oscore_dir::load_for_serving(dir)?;
            Ok((context, Some(super::oscore_dir::keep_reserving(dir))))
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(usage)?;
    let mut config = em.engine_config();
    config.transmission.nstart = args.nstart;
    config.max_oscore_contexts = config.max_oscore_contexts.max(oscore.len());
    for (context, _) in &oscore {
        let kid = hex(context.recipient_id());
        tracing::info!("OSCORE: serving kid {kid} (requests name the identity oscore:{kid})");
    }
    config.amplification = super::amplification::limit(args.amplification_factor);
    if let Some(secs) = args.ack_timeout {
        config.transmission.ack_timeout = seconds("--ack-timeout", secs)?;
    }
    let path = args.db.clone().unwrap_or_else(SqliteStore::default_path);
    let store = open_store(&path)?;
    em.authorities = args.authority.clone();
    em.named_by_first = !args.authority.is_empty();
    let scheme = if dtls.is_some() { "coaps" } else { "coap" };
    let listen = listen(&args.bind, &args.bind_plain, dtls.is_some())?;
    let sockets = Sockets {
        binds: listen.binds,
        plain_binds: listen.plain,
        share_port: args.reuse_port,
        trace: super::request_log::tracer(args.verbose),
        dtls,
        oscore,
    };
    let access = em.access.clone();
    let gateway = Gateway::start(sockets, em, Box::new(store), config).map_err(start_failure)?;
    log_listening(&gateway.driver);
    tracing::info!(
        "entity database {} ({}); entities named {scheme}://{}/e/<name>",
        path.display(),
        covey_group::plural::count(gateway.entities, "entity", "entities"),
        gateway
            .authorities
            .first()
            .map_or_else(String::new, |a| SocketAuthority(*a).to_string())
    );
    tracing::info!("{}", access.describe("entity management"));
    if !args.no_http {
        start_web(&args, &gateway, &access).await?;
    }
    super::signal::wait_for_signal().await;
    tracing::info!("shutting down");
    gateway.driver.shutdown().await;
    Ok(())
}

/// Starts the web console and the HTTP-CoAP proxy. A busy default port only costs the
/// console (other gateways may run beside this one); a busy `--http` given by hand is an error.
async fn start_web(args: &GatewayArgs, gateway: &Gateway, access: &Access) -> Result<(), Failure> {
    let config = covey_web::coap_client::config(args.nstart);
    let max_body = config.max_body_size;
    let mut client = covey::Client::builder().config(config);
    let scheme = match args.dtls.config()? {
        Some(dtls) => {
            client = client.dtls(dtls);
            "coaps"
        }
        None => "coap",
    };
    let client = client
        .build()
        .map_err(|e| other(format!("cannot start the HTTP proxy's CoAP client: {e}")))?;
    let em = gateway.driver.local_addrs().first().copied();
    let options = WebOptions {
        em_uri: covey_web::em_uri(scheme, em),
        max_body,
        host_names: args.http_allow_host.clone(),
        max_connections: args.http_max_connections,
        max_connections_per_address: args.http_max_connections_per_address,
        header_timeout: http_seconds("--http-header-timeout", args.http_header_timeout)?,
        idle_timeout: http_seconds("--http-idle-timeout", args.http_idle_timeout)?,
        proxy_multicast: args.http_proxy_multicast,
    };
    let server = match WebServer::bind(args.http, client, options).await {
        Ok(s) => s,
        Err(e) if !http_given() => {
            tracing::warn!("no web console: cannot listen on {}: {e}", args.http);
            return Ok(());
        }
        Err(e) => {
            return Err(other(format!(
                "cannot listen on {} (--http): {e}",
                args.http
            )))
        }
    };
    let addr = server.local_addr().map_err(|e| other(e.to_string()))?;
    let reach = if addr.ip().is_loopback() {
        "loopback only; --http ADDR to listen elsewhere"
    } else {
        "reachable from other hosts: anyone who reaches it can change entities"
    };
    tracing::info!("web console and HTTP-CoAP proxy (/hc/) on http://{addr}/ ({reach})");
    if let Access::Policy(_) = access {
        // The console's CoAP client sends from this host.
        tracing::info!(
            "the web console and HTTP-CoAP proxy act as a loopback client: the policy's \
             rules for \"loopback\" say what they may do"
        );
    }
    server.spawn();
    Ok(())
}

/// True when `--http` was given on the command line (not just defaulted).
fn http_given() -> bool {
    std::env::args().any(|a| a == "--http" || a.starts_with("--http="))
}

/// Opens the SQLite store at `path`, creating its folder; a failure is one line.
pub fn open_store(path: &Path) -> Result<SqliteStore, Failure> {
    SqliteStore::create_at(path).map_err(|e| other(e.to_string()))
}

/// Why the gateway could not start, as the CLI reports it.
pub fn start_failure(e: GatewayError) -> Failure {
    match e {
        GatewayError::Driver(e) => super::start_error::start_failure(e),
        other => Failure::new(ExitKind::Other, other.to_string()),
    }
}

/// Lower-case hex, as the policy writes a kid.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn usage(e: impl ToString) -> Failure {
    Failure::new(ExitKind::Usage, e.to_string())
}

fn other(message: String) -> Failure {
    Failure::new(ExitKind::Other, message)
}

/// A positive, finite number of seconds given for `flag`, as the HTTP side takes it.
fn http_seconds(flag: &str, secs: f64) -> Result<Duration, Failure> {
    seconds(flag, secs)?;
    Ok(Duration::from_secs_f64(secs))
}

/// A positive, finite number of seconds given for `flag`.
fn seconds(flag: &str, secs: f64) -> Result<covey_proto::Duration, Failure> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .map(|d| covey_proto::Duration::from_nanos(d.as_nanos().min(u64::MAX as u128) as u64))
        .ok_or_else(|| {
            usage(format!(
                "{flag} wants a positive number of seconds, not {secs}"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unwritable_database_is_one_line() {
        let dir = std::env::temp_dir().join(format!("covey-gw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let corrupt = dir.join("corrupt.db");
        std::fs::write(&corrupt, vec![0x55u8; 8192]).unwrap();
        let e = open_store(&corrupt).unwrap_err();
        assert!(e.message.contains("corrupt.db"), "{}", e.message);
        assert!(!e.message.contains('\n'));
        // A directory where the file should be.
        let e = open_store(&dir).unwrap_err();
        assert!(!e.message.contains('\n'), "{}", e.message);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
