//! `covey get|put|post|delete|fetch|observe|discover URI`: one request (or an observation, or
//! a multicast request) and its responses, with exit codes by outcome.

pub mod args;
pub mod discover_args;
mod edhoc;
mod print;
pub mod progress;
pub(crate) mod request_options;

use std::sync::Arc;
use std::time::Duration;

use covey::{Client, ClientBuilder, Config, RequestBuilder};
use covey_core::uri::Uri;
use covey_core::{Block, Code, OptionNumber};

pub use args::ClientArgs;
use print::Printer;
use progress::Progress;

use crate::exit::{ExitKind, Failure};

/// Which client command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// `covey get`.
    Get,
    /// `covey put`.
    Put,
    /// `covey post`.
    Post,
    /// `covey delete`.
    Delete,
    /// `covey fetch`.
    Fetch,
    /// `covey observe`.
    Observe,
    /// `covey discover`.
    Discover,
}

impl Verb {
    fn method(self) -> Code {
        match self {
            Verb::Get | Verb::Observe | Verb::Discover => Code::GET,
            Verb::Put => Code::PUT,
            Verb::Post => Code::POST,
            Verb::Delete => Code::DELETE,
            Verb::Fetch => Code::FETCH,
        }
    }
}

/// Everything the flags say, checked before any socket is opened.
#[derive(Debug)]
struct Plan {
    uri: String,
    method: Code,
    observe: Option<Duration>,
    config: Config,
}

/// Runs a client command on a runtime of its own.
pub fn run(verb: Verb, args: ClientArgs) -> Result<(), Failure> {
    let mut args = args;
    let plan = plan(verb, &mut args)?;
    crate::logging::init(args.verbose.saturating_sub(1));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(ExitKind::Other, format!("cannot start runtime: {e}")))?;
    runtime.block_on(execute(plan, args))
}

fn plan(verb: Verb, args: &mut ClientArgs) -> Result<Plan, Failure> {
    // `-s URI`: clap took the URI as the optional seconds.
    if args.uri.is_none() {
        if let Some(s) = args.observe.take_if(|s| s.parse::<f64>().is_err()) {
            args.uri = Some(s);
            args.observe = Some("0".into());
        }
    }
    let Some(uri) = args.uri.clone() else {
        return Err(Failure::new(ExitKind::Usage, "missing URI"));
    };
    let uri = if verb == Verb::Discover {
        discovery_uri(&uri)?
    } else {
        uri
    };
    let method = match &args.method {
        Some(m) => request_options::method(m)?,
        None => verb.method(),
    };
    let observe = match (&args.observe, verb) {
        (Some(secs), _) => Some(seconds(secs)?),
        (None, Verb::Observe) => Some(Duration::ZERO),
        (None, _) => None,
    };
    let mut config = Config::default();
    if let Some(size) = args.block_size {
        if !(16..=1024).contains(&size) || !size.is_power_of_two() {
            return Err(Failure::new(
                ExitKind::Usage,
                "block size must be 16, 32, 64, 128, 256, 512 or 1024",
            ));
        }
        config.block_szx = Block::szx_for_size(size);
    }
    if args.max_body_size == 0 {
        return Err(Failure::new(
            ExitKind::Usage,
            "--max-body-size must be at least 1",
        ));
    }
    config.max_body_size = args.max_body_size;
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        return Err(Failure::new(ExitKind::Usage, "timeout must be positive"));
    }
    Ok(Plan {
        uri,
        method,
        observe,
        config,
    })
}

fn seconds(text: &str) -> Result<Duration, Failure> {
    text.parse::<f64>()
        .ok()
        .filter(|s| *s >= 0.0 && s.is_finite())
        .map(Duration::from_secs_f64)
        .ok_or_else(|| Failure::new(ExitKind::Usage, format!("bad number of seconds {text:?}")))
}

/// `/.well-known/core` of the URI's authority, with the URI's query as the filter: discovery
/// asks the server, whatever path was given.
fn discovery_uri(uri: &str) -> Result<String, Failure> {
    let bad = |reason: String| {
        Failure::from(covey::Error::InvalidUri {
            uri: uri.to_string(),
            reason,
        })
    };
    Uri::parse(uri).map_err(|e| bad(e.to_string()))?;
    let without_fragment = uri.split('#').next().unwrap_or(uri);
    let (before_query, query) = match without_fragment.split_once('?') {
        Some((head, q)) => (head, format!("?{q}")),
        None => (without_fragment, String::new()),
    };
    let authority_start = before_query
        .find("://")
        .map(|i| i + 3)
        .ok_or_else(|| bad("no scheme".into()))?;
    let authority_end = before_query[authority_start..]
        .find('/')
        .map_or(before_query.len(), |i| authority_start + i);
    let authority = &before_query[..authority_end];
    Ok(format!("{authority}/.well-known/core{query}"))
}

fn build_request(
    client: &Client,
    plan: &Plan,
    args: &ClientArgs,
) -> Result<RequestBuilder, Failure> {
    let mut request = client
        .request(plan.method, plan.uri.clone())
        .confirmable(!args.non)
        .timeout(Duration::from_secs_f64(args.timeout));
    if let Some(p) = &args.payload {
        let payload = request_options::payload(p)?;
        if payload.len() > plan.config.max_body_size {
            return Err(Failure::new(
                ExitKind::Usage,
                format!(
                    "the payload of {} bytes is over the {}-byte limit of a block-wise body \
                     (--max-body-size raises it)",
                    payload.len(),
                    plan.config.max_body_size
                ),
            ));
        }
        request = request.payload(payload);
    }
    if let Some(cf) = &args.content_format {
        request = request.content_format(request_options::content_format(cf)?);
    }
    if let Some(a) = &args.accept {
        request = request.accept(request_options::content_format(a)?);
    }
    let mut given_block2 = false;
    for o in &args.options {
        let (number, value) = request_options::option(o)?;
        given_block2 |= number == OptionNumber::BLOCK2;
        request = request.option(number, value);
    }
    if let Some(t) = &args.token {
        request = request.token(request_options::token(t)?);
    }
    // -b asks the server for blocks of that size from the first (RFC 7959 §2.4), as
    // libcoap's coap-client -b does; a plain GET's blocks are otherwise the server's choice.
    let wants_body = matches!(plan.method, Code::GET | Code::FETCH) && plan.observe.is_none();
    if let (Some(_), true, false) = (args.block_size, wants_body, given_block2) {
        if let Ok(block) = Block::new(0, false, plan.config.block_szx) {
            let mut value = [0u8; 4];
            request = request.option(OptionNumber::BLOCK2, block.encode(&mut value).to_vec());
        }
    }
    Ok(request)
}

async fn execute(plan: Plan, args: ClientArgs) -> Result<(), Failure> {
    let mut builder = ClientBuilder::new().config(plan.config.clone());
    if let Some(dtls) = args
        .dtls
        .client_config(Duration::from_secs_f64(args.timeout))?
    {
        builder = builder.dtls(dtls);
    }
    if let Some(dir) = &args.oscore {
        // A download and an upload of the largest body, one request per block.
        let blocks = (2 * plan.config.max_body_size).div_ceil(plan.config.block_size()) as u64;
        let context = crate::commands::oscore_dir::load_for_sending(dir, blocks)
            .map_err(|e| Failure::new(ExitKind::Usage, e))?;
        builder = builder.oscore_context(context);
    }
    let mut edhoc_message_3 = None;
    if let Some(dir) = &args.edhoc {
        let timeout = Duration::from_secs_f64(args.timeout);
        let combined = !args.edhoc_separate;
        let handshake =
            edhoc::handshake(&plan.uri, dir, (plan.config.clone(), timeout), combined).await?;
        builder = builder.oscore_context(handshake.context);
        edhoc_message_3 = handshake.message_3;
    }
    let progress = Progress::new(plan.config.transmission.max_retransmit, args.progress);
    let verbose = args.verbose > 0;
    let tracer = progress.clone();
    builder = builder.trace(Arc::new(move |t: &covey::Trace<'_>| {
        if verbose {
            print::trace(t);
        }
        tracer.observe(t);
    }));
    let client = builder.build()?;
    let mut request = build_request(&client, &plan, &args)?;
    if args.oscore.is_some() || args.edhoc.is_some() {
        request = request.oscore(0);
    }
    if let Some(message_3) = edhoc_message_3 {
        request = request.edhoc_message_3(message_3);
    }
    let multicast = is_multicast(&plan.uri);
    if plan.observe.is_some() || multicast {
        let result = stream(request, &plan, &args, multicast, &progress).await;
        client.shutdown().await;
        return result;
    }
    let printer = Printer::new(args.json, args.verbose > 0);
    let started = tokio::time::Instant::now();
    let response = request.send().await.map_err(|e| match e {
        covey::Error::Timeout(peer) => timed_out(&peer.to_string(), started, &progress),
        e => Failure::of_request(&plan.uri, e),
    })?;
    printer.response(&response, started.elapsed())?;
    client.shutdown().await;
    outcome(&response)
}

fn is_multicast(uri: &str) -> bool {
    Uri::parse(uri)
        .is_ok_and(|u| matches!(u.host(), covey_core::uri::Host::Ip(ip) if ip.is_multicast()))
}

/// An observation (until `-s` runs out, the server ends it, or Ctrl-C) or a multicast
/// request (until its window closes): every response is printed as it comes.
async fn stream(
    request: RequestBuilder,
    plan: &Plan,
    args: &ClientArgs,
    multicast: bool,
    progress: &Progress,
) -> Result<(), Failure> {
    let printer = Printer::for_stream(args.json, multicast, args.verbose > 0);
    let started = tokio::time::Instant::now();
    let mut responses = if plan.observe.is_some() {
        request.observe().await
    } else {
        request.stream().await
    }
    .map_err(|e| Failure::of_request(&plan.uri, e))?;
    let first_wait = Duration::from_secs_f64(args.timeout);
    let end = plan.observe.filter(|d| !d.is_zero()).map(|d| started + d);
    let mut outcome_so_far: Option<Result<(), Failure>> = None;
    loop {
        let waiting_for_first = outcome_so_far.is_none();
        let deadline = match (end, waiting_for_first) {
            (_, true) => Some(started + first_wait),
            (end, false) => end,
        };
        let sleep = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            item = responses.next() => match item {
                None => break,
                Some(Ok(r)) => {
                    printer.response(&r, started.elapsed())?;
                    let this = outcome(&r);
                    // Multicast: any success is success. Observe: the first answer decides.
                    outcome_so_far = match outcome_so_far {
                        None => Some(this),
                        Some(Err(_)) if multicast && this.is_ok() => Some(Ok(())),
                        kept => kept,
                    };
                    if !multicast && r.observe().is_none() {
                        break; // not (or no longer) observing
                    }
                }
                Some(Err(e)) => return Err(Failure::of_request(&plan.uri, e)),
            },
            _ = sleep => {
                if waiting_for_first && !multicast {
                    return Err(timed_out(&plan.uri, started, progress));
                }
                if plan.observe.is_some() {
                    responses.cancel().await;
                }
                break;
            }
            _ = tokio::signal::ctrl_c() => {
                if plan.observe.is_some() {
                    responses.cancel().await;
                }
                break;
            }
        }
    }
    outcome_so_far.unwrap_or_else(|| {
        Err(Failure::new(
            ExitKind::Timeout,
            format!("no response to {} in time", plan.uri),
        ))
    })
}

/// The timeout of a request to `peer` sent at `started`: how long and how often.
fn timed_out(peer: &str, started: tokio::time::Instant, progress: &Progress) -> Failure {
    let message = progress::timeout_message(peer, started.elapsed(), progress.transmissions());
    Failure::new(ExitKind::Timeout, message)
}

/// Success for 2.xx, otherwise the exit code of the class with the diagnostic payload.
fn outcome(response: &covey::Response) -> Result<(), Failure> {
    let Some(kind) = Failure::for_code(response.code) else {
        return Ok(());
    };
    let source = response
        .source
        .map_or_else(String::new, |s| format!(" from {s}"));
    let diagnostic = match response.payload_text().trim() {
        "" => String::new(),
        text => format!(": {}", crate::render::terminal::safe_for_terminal(text)),
    };
    // 4.13 with Size1: the server's limit (RFC 7959 §2.9.3).
    let limit = match response.options.uint(covey_core::OptionNumber::SIZE1) {
        Some(size) if response.code == Code::REQUEST_ENTITY_TOO_LARGE => {
            format!(" (the server takes at most {size} bytes)")
        }
        _ => String::new(),
    };
    Err(Failure::new(
        kind,
        format!(
            "{}{source}{diagnostic}{limit}",
            crate::render::message_text::code_label(response.code)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_uris() {
        let d = |u| discovery_uri(u).unwrap();
        assert_eq!(d("coap://[::1]"), "coap://[::1]/.well-known/core");
        assert_eq!(d("coap://h:1/?rt=x"), "coap://h:1/.well-known/core?rt=x");
        assert_eq!(d("coap://h/other"), "coap://h/.well-known/core");
        assert_eq!(
            d("coap://[::1]:5/a/b?rt=x&if=y"),
            "coap://[::1]:5/.well-known/core?rt=x&if=y"
        );
        assert_eq!(
            d("coap://h/.well-known/core?rt=x"),
            "coap://h/.well-known/core?rt=x"
        );
        assert!(discovery_uri("nope").is_err());
    }
}
