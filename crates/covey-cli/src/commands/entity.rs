//! `covey entity create|list|show|delete|query GATEWAY ...`: the Entity Manager's resources
//! as friendly commands — pretty on a terminal, the gateway's payload as is when piped, one
//! JSON object with `--json` — with the exit codes of the other client commands.
//! `covey entity bench` measures the EM's fan-out.

mod render;

use std::io::Write;
use std::time::Duration;

use clap::{ArgAction, Args, Subcommand};
use covey::{Client, ClientBuilder, Response};
use covey_core::uri::Uri;
use covey_core::{Code, ContentFormat};
use covey_group::profile::{enr_from, ProfileError};
use covey_group::{ErrorReport, Operation, ProfileDocument};
use serde_json::Value;

use crate::commands::client::progress::default_timeout;
use crate::commands::dtls_args::DtlsArgs;
use crate::exit::{ExitKind, Failure};
use crate::output::{print, stdout_is_terminal};
use crate::render::message_text::code_label;
use crate::render::terminal::safe_for_terminal;

/// Arguments of `covey entity`.
#[derive(Debug, Args)]
pub struct EntityArgs {
    #[command(subcommand)]
    command: EntityCommand,
}

/// The `covey entity` subcommands.
#[derive(Debug, Subcommand)]
enum EntityCommand {
    /// Create an entity: a group of member resources used as one resource.
    Create(CreateArgs),
    /// List the gateway's entities.
    List(Gateway),
    /// Show an entity's profile (members, operations, mcastURI, ...).
    Show(NameArgs),
    /// Delete an entity (multicast members leave its group first; each result is shown).
    Delete(NameArgs),
    /// Query an entity: fan out to its members and combine their replies.
    Query(QueryArgs),
    /// Measure the EM's fan-out on loopback: queries/s and latency for groups of members.
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Bench(crate::sibling::PassThrough),
}

/// The gateway and the output flags every subcommand takes.
#[derive(Debug, Args)]
struct Gateway {
    /// The gateway, e.g. coap://[::1], coap://192.0.2.1:5683 or coaps://[::1] (with DTLS
    /// credentials; a trailing /e is allowed).
    #[arg(value_name = "GATEWAY")]
    gateway: String,

    /// Print one JSON object (the gateway's JSON reply).
    #[arg(long)]
    json: bool,

    /// Give up after SECS seconds without a response (the default is RFC 7252's
    /// MAX_TRANSMIT_WAIT).
    #[arg(short = 'B', long, value_name = "SECS", default_value_t = default_timeout())]
    timeout: f64,

    /// Log more (-v: the client's driver).
    #[arg(short = 'v', long, action = ArgAction::Count)]
    verbose: u8,

    /// DTLS credentials for a coaps:// gateway.
    #[command(flatten)]
    dtls: DtlsArgs,

    /// Protect the requests to the gateway with OSCORE (RFC 8613) under the security
    /// context in DIR (aiocoap's layout: settings.json, secret.json, sequence.json).
    #[arg(long, value_name = "DIR")]
    oscore: Option<std::path::PathBuf>,
}

/// A gateway and an entity name.
#[derive(Debug, Args)]
struct NameArgs {
    #[command(flatten)]
    gateway: Gateway,

    /// The entity name.
    #[arg(value_name = "NAME")]
    name: String,
}

/// Arguments of `covey entity create`.
#[derive(Debug, Args)]
struct CreateArgs {
    #[command(flatten)]
    gateway: Gateway,

    /// The entity name (letters, digits, '-', '_', '.'); it becomes /e/NAME.
    #[arg(value_name = "NAME")]
    name: String,

    /// A member resource (repeatable), e.g. coap://[2001:db8::7]/s/t; an entity's URI nests it.
    #[arg(long = "member", value_name = "URI", required = true)]
    members: Vec<String>,

    /// Operations the entity offers, the first the default (lst, avg, min, max, sum,
    /// count, median; comma-separated or repeated).
    #[arg(long, value_name = "OP", value_delimiter = ',')]
    eo: Vec<String>,

    /// Member replies to wait for (1..G; 1 is anycast) [default: all].
    #[arg(long, value_name = "N")]
    enr: Option<u64>,

    /// How the EM reaches the members: unicast or multicast (fixed at creation).
    #[arg(long, value_name = "TYPE")]
    ect: Option<String>,

    /// Message type towards the members: con or non [default: con, non for multicast].
    #[arg(long, value_name = "TYPE")]
    emt: Option<String>,

    /// Delay between successive member requests: milliseconds, or auto.
    #[arg(long, value_name = "MS|auto")]
    delay: Option<String>,

    /// Fail (4.12) instead of 4.00 when the name exists (sends If-None-Match).
    #[arg(long)]
    if_none_match: bool,

    /// The EM's OSCORE context with a member, URI=DIR (repeatable; DIR in aiocoap's layout,
    /// the EM's side): the EM asks that member under it. Stored with the entity, never
    /// shown; sent only over --oscore or coaps://.
    #[arg(long = "member-oscore", value_name = "URI=DIR", value_parser = member_oscore_arg)]
    member_oscore: Vec<(String, std::path::PathBuf)>,
}

/// `URI=DIR` of `--member-oscore`; the URI ends at the last `=`, as a DIR may hold none.
fn member_oscore_arg(text: &str) -> Result<(String, std::path::PathBuf), String> {
    match text.rsplit_once('=') {
        Some((uri, dir)) if !uri.is_empty() && !dir.is_empty() => Ok((uri.to_string(), dir.into())),
        _ => Err(format!("{text:?} is not URI=DIR")),
    }
}

/// Arguments of `covey entity query`.
#[derive(Debug, Args)]
struct QueryArgs {
    #[command(flatten)]
    gateway: Gateway,

    /// The entity name.
    #[arg(value_name = "NAME")]
    name: String,

    /// The operation for this query (lst, avg, min, max, sum, count, median).
    #[arg(long, value_name = "OP")]
    eo: Option<String>,

    /// Member replies to wait for, for this query.
    #[arg(long, value_name = "N")]
    enr: Option<u64>,

    /// Message type towards the members for this query: con or non.
    #[arg(long, value_name = "TYPE")]
    emt: Option<String>,

    /// Delay between member requests for this query: milliseconds, or auto.
    #[arg(long, value_name = "MS|auto")]
    delay: Option<String>,

    /// The reply's format: text, json, cbor, senml+json, senml+cbor (or a number).
    #[arg(short = 'A', long, value_name = "FORMAT")]
    accept: Option<String>,
}

/// How results are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `--json`: one JSON object.
    Json,
    /// A terminal: readable text.
    Pretty,
    /// Piped: the payload as received.
    Raw,
}

impl Gateway {
    fn mode(&self) -> Mode {
        if self.json {
            Mode::Json
        } else if stdout_is_terminal() {
            Mode::Pretty
        } else {
            Mode::Raw
        }
    }
}

/// Runs a `covey entity` subcommand.
pub fn run(args: EntityArgs) -> Result<(), Failure> {
    if let EntityCommand::Bench(b) = args.command {
        return crate::sibling::run("covey-bench", &["entity"], b.args);
    }
    let gateway = match &args.command {
        EntityCommand::Create(a) => &a.gateway,
        EntityCommand::List(g) => g,
        EntityCommand::Show(a) | EntityCommand::Delete(a) => &a.gateway,
        EntityCommand::Query(a) => &a.gateway,
        EntityCommand::Bench(_) => return Ok(()),
    };
    crate::logging::init(gateway.verbose);
    let dtls = gateway.dtls.client_config(timeout(gateway)?)?;
    let oscore = match &gateway.oscore {
        Some(dir) => Some(
            crate::commands::oscore_dir::load_for_sending(dir, 0)
                .map_err(|e| Failure::new(ExitKind::Usage, e))?,
        ),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(ExitKind::Other, format!("cannot start runtime: {e}")))?;
    runtime.block_on(async move {
        let mut builder = ClientBuilder::new();
        if let Some(dtls) = dtls {
            builder = builder.dtls(dtls);
        }
        if let Some(context) = oscore {
            builder = builder.oscore_context(context);
        }
        let client = builder.build()?;
        let result = match args.command {
            EntityCommand::Create(a) => create(&client, a).await,
            EntityCommand::List(g) => list(&client, g).await,
            EntityCommand::Show(a) => show(&client, a).await,
            EntityCommand::Delete(a) => delete(&client, a).await,
            EntityCommand::Query(a) => query(&client, a).await,
            EntityCommand::Bench(_) => Ok(()),
        };
        client.shutdown().await;
        result
    })
}

fn usage(message: impl Into<String>) -> Failure {
    Failure::new(ExitKind::Usage, message)
}

/// `coap://host[:port]` of a gateway URI given with no path, `/` or `/e`.
fn base_uri(gateway: &str) -> Result<String, Failure> {
    let parsed = Uri::parse(gateway).map_err(|e| {
        Failure::from(covey::Error::InvalidUri {
            uri: gateway.to_string(),
            reason: e.to_string(),
        })
    })?;
    if parsed.query().is_some() || !matches!(parsed.path(), "" | "/" | "/e" | "/e/") {
        return Err(usage(format!(
            "bad URI {gateway}: name the gateway only, e.g. coap://[::1] (not a path or query)"
        )));
    }
    let tail = parsed.path().len();
    Ok(gateway[..gateway.len() - tail].to_string())
}

fn check_name(name: &str) -> Result<(), Failure> {
    covey_group::profile::check_name(name)
        .map_err(|problem| usage(format!("bad entity name: {problem}")))
}

fn timeout(g: &Gateway) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(g.timeout)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| usage("timeout must be positive"))
}

/// One request to the gateway.
struct Call<'a> {
    method: Code,
    uri: String,
    accept: Option<ContentFormat>,
    payload: Option<(ContentFormat, Vec<u8>)>,
    queries: Vec<String>,
    if_none_match: bool,
    gateway: &'a Gateway,
}

impl Call<'_> {
    async fn send(self, client: &Client) -> Result<Response, Failure> {
        let mut request = client
            .request(self.method, self.uri.clone())
            .timeout(timeout(self.gateway)?);
        if let Some(a) = self.accept {
            request = request.accept(a);
        }
        if let Some((cf, body)) = self.payload {
            request = request.content_format(cf).payload(body);
        }
        for q in self.queries {
            request = request.query(q);
        }
        if self.gateway.oscore.is_some() {
            request = request.oscore(0);
        }
        if self.if_none_match {
            request = request.if_none_match();
        }
        request
            .send()
            .await
            .map_err(|e| Failure::of_request(&self.uri, e))
    }
}

fn call<'a>(g: &'a Gateway, method: Code, path: &str) -> Result<Call<'a>, Failure> {
    Ok(Call {
        method,
        uri: format!("{}{path}", base_uri(&g.gateway)?),
        accept: None,
        payload: None,
        queries: Vec::new(),
        if_none_match: false,
        gateway: g,
    })
}

/// Success for 2.xx; otherwise the exit code of the class and the gateway's diagnostic: an
/// EM's error report gives the text and names the field at fault (with `--json`, the report
/// is printed on standard output too).
fn outcome(response: &Response, mode: Mode) -> Result<(), Failure> {
    let Some(kind) = Failure::for_code(response.code) else {
        return Ok(());
    };
    if let Some(report) = ErrorReport::from_response(response.content_format(), &response.payload) {
        if mode == Mode::Json {
            let line = serde_json::to_string(&report).unwrap_or_default();
            print(&format!("{line}\n")).map_err(Failure::from)?;
        }
        return Err(Failure::new(kind, refusal_line(response.code, &report)));
    }
    let diagnostic = match response.payload_text().trim() {
        // An EM explains every 4.04 and 4.05; a bare one comes from some other server.
        "" if matches!(response.code, Code::NOT_FOUND | Code::METHOD_NOT_ALLOWED) => {
            let host = response
                .source
                .map_or_else(|| "the host".to_string(), |s| s.to_string());
            format!(
                ": {host} does not look like an Entity Manager (no /e resource); \
                 is `covey gateway` running there?"
            )
        }
        "" => String::new(),
        text => format!(": {}", safe_for_terminal(text)),
    };
    Err(Failure::new(
        kind,
        format!("{}{diagnostic}", code_label(response.code)),
    ))
}

/// One line for an EM's error report: code, text and, when it names one, the field and why,
/// e.g. `4.00 Bad Request: entity x not created: ... [field: enr, reason: out_of_range]`.
fn refusal_line(code: Code, report: &ErrorReport) -> String {
    let text = report
        .error
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let about = match &report.field {
        Some(field) => format!(
            " [field: {}, reason: {}]",
            safe_for_terminal(field),
            report.reason
        ),
        None => String::new(),
    };
    let text = if text.is_empty() {
        String::new()
    } else {
        format!(": {}", safe_for_terminal(&text))
    };
    format!("{}{text}{about}", code_label(code))
}

/// Prints the payload as received (piped); a text payload (plain, JSON, link format) that
/// does not end a line gets a newline, so outputs can be read line by line.
fn print_raw(r: &Response) -> Result<(), Failure> {
    let mut bytes = r.payload.clone();
    let text = matches!(
        r.content_format(),
        None | Some(ContentFormat::TEXT_PLAIN | ContentFormat::LINK_FORMAT)
    ) || r.content_format().is_some_and(|f| f.is_json());
    if text && !bytes.is_empty() && !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(&bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::new(
            ExitKind::Other,
            format!("cannot write to standard output: {e}"),
        )),
        Ok(()) => Ok(()),
    }
}

/// Prints a JSON payload as one line.
fn print_json(r: &Response) -> Result<(), Failure> {
    let value = json_payload(r)?;
    print(&format!("{value}\n")).map_err(Failure::from)
}

/// The JSON (or CBOR) payload of a response as a JSON value.
fn json_payload(r: &Response) -> Result<Value, Failure> {
    let parsed = match r.content_format() {
        Some(ContentFormat::CBOR) => {
            ciborium::de::from_reader::<Value, _>(r.payload.as_slice()).map_err(|e| e.to_string())
        }
        _ => serde_json::from_slice(&r.payload).map_err(|e| e.to_string()),
    };
    parsed.map_err(|e| {
        Failure::new(
            ExitKind::Other,
            format!("the gateway's reply is not the JSON expected: {e}"),
        )
    })
}

/// A profile document (JSON, or CBOR) as the EM's own type.
fn profile_payload(r: &Response) -> Result<ProfileDocument, Failure> {
    let parsed = match r.content_format() {
        Some(ContentFormat::CBOR) => {
            ciborium::de::from_reader(r.payload.as_slice()).map_err(|e| e.to_string())
        }
        _ => serde_json::from_slice(&r.payload).map_err(|e| e.to_string()),
    };
    parsed.map_err(|e| {
        Failure::new(
            ExitKind::Other,
            format!("the gateway's reply is not a profile document: {e}"),
        )
    })
}

fn print_text(text: &str) -> Result<(), Failure> {
    let mut text = safe_for_terminal(text).into_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    print(&text).map_err(Failure::from)
}

async fn create(client: &Client, a: CreateArgs) -> Result<(), Failure> {
    check_name(&a.name)?;
    let body = create_payload(&a)?;
    let mode = a.gateway.mode();
    let mut c = call(&a.gateway, Code::POST, "/e")?;
    let body =
        serde_json::to_vec(&body).map_err(|e| Failure::new(ExitKind::Other, e.to_string()))?;
    c.payload = Some((ContentFormat::JSON, body));
    c.accept = (mode == Mode::Json).then_some(ContentFormat::JSON);
    c.if_none_match = a.if_none_match;
    let r = c.send(client).await?;
    outcome(&r, mode)?;
    match mode {
        Mode::Json => print_json(&r),
        Mode::Pretty => print_text(&r.payload_text()),
        Mode::Raw => print_raw(&r),
    }
}

/// The creation payload: the EM's profile document with the fields given, each checked by
/// the EM's own rules first (a bad value is a usage error naming its option).
fn create_payload(a: &CreateArgs) -> Result<ProfileDocument, Failure> {
    fn field<T: std::str::FromStr<Err = ProfileError>>(
        value: Option<&str>,
    ) -> Result<Option<T>, Failure> {
        value.map(str::parse).transpose().map_err(bad_option)
    }
    let eo =
        a.eo.iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .map(str::parse)
            .collect::<Result<Vec<Operation>, _>>()
            .map_err(bad_option)?;
    Ok(ProfileDocument {
        ect: field(a.ect.as_deref())?,
        emt: field(a.emt.as_deref())?,
        enr: a
            .enr
            .map(|n| enr_from(n.into()))
            .transpose()
            .map_err(bad_option)?,
        eo: (!eo.is_empty()).then_some(eo),
        delay: field(a.delay.as_deref())?,
        oscore: member_contexts(a)?,
        ..ProfileDocument::new(&a.name, a.members.clone())
    })
}

/// The `oscore` field of `--member-oscore`: each URI one of `--member`, each DIR a context,
/// and only over a protected channel (the clear would show the secrets).
fn member_contexts(
    a: &CreateArgs,
) -> Result<Option<std::collections::BTreeMap<String, covey_group::MemberContext>>, Failure> {
    if a.member_oscore.is_empty() {
        return Ok(None);
    }
    if a.gateway.oscore.is_none() && !a.gateway.gateway.starts_with("coaps://") {
        return Err(usage(
            "--member-oscore sends secrets: talk to the gateway with --oscore or over coaps://",
        ));
    }
    let mut contexts = std::collections::BTreeMap::new();
    for (uri, dir) in &a.member_oscore {
        if !a.members.contains(uri) {
            return Err(usage(format!(
                "--member-oscore {uri}: not one of the --member URIs"
            )));
        }
        let context = crate::commands::oscore_dir::member_context(dir).map_err(usage)?;
        if contexts.insert(uri.clone(), context).is_some() {
            return Err(usage(format!("--member-oscore {uri}: given twice")));
        }
    }
    Ok(Some(contexts))
}

/// A usage error for an option whose value the EM would refuse, e.g.
/// `--ect: field "ect": "broadcast" is not unicast or multicast`.
fn bad_option(e: ProfileError) -> Failure {
    let option = e.problem().field.unwrap_or_default();
    usage(format!("--{option}: {e}"))
}

async fn list(client: &Client, g: Gateway) -> Result<(), Failure> {
    let mode = g.mode();
    let r = call(&g, Code::GET, "/e")?.send(client).await?;
    outcome(&r, mode)?;
    let base = base_uri(&g.gateway)?;
    match mode {
        Mode::Raw => print_raw(&r),
        Mode::Json => {
            let entities = render::entity_list(&r.payload_text(), &base)?;
            print(&format!("{}\n", Value::Array(entities))).map_err(Failure::from)
        }
        Mode::Pretty => {
            let entities = render::entity_list(&r.payload_text(), &base)?;
            print_text(&render::list_table(&entities))
        }
    }
}

async fn show(client: &Client, a: NameArgs) -> Result<(), Failure> {
    check_name(&a.name)?;
    let mode = a.gateway.mode();
    let path = format!("/e/{}/profile", a.name);
    let r = call(&a.gateway, Code::GET, &path)?.send(client).await?;
    outcome(&r, mode)?;
    match mode {
        Mode::Raw => print_raw(&r),
        Mode::Json => print_json(&r),
        Mode::Pretty => print_text(&render::profile(&profile_payload(&r)?)),
    }
}

async fn delete(client: &Client, a: NameArgs) -> Result<(), Failure> {
    check_name(&a.name)?;
    let mode = a.gateway.mode();
    let mut c = call(&a.gateway, Code::DELETE, &format!("/e/{}", a.name))?;
    c.accept = (mode == Mode::Json).then_some(ContentFormat::JSON);
    let r = c.send(client).await?;
    outcome(&r, mode)?;
    match mode {
        Mode::Json => print_json(&r),
        Mode::Pretty => print_text(&r.payload_text()),
        Mode::Raw => print_raw(&r),
    }
}

async fn query(client: &Client, a: QueryArgs) -> Result<(), Failure> {
    check_name(&a.name)?;
    let mode = a.gateway.mode();
    let asked = match &a.accept {
        Some(name) => Some(crate::commands::client::request_options::content_format(
            name,
        )?),
        None => None,
    };
    if mode == Mode::Json && asked.is_some_and(|f| !f.is_json()) {
        return Err(usage(
            "--json prints JSON: leave --accept out, or ask for json or senml+json",
        ));
    }
    let mut c = call(&a.gateway, Code::GET, &format!("/e/{}", a.name))?;
    // On a terminal without --accept the JSON reply is rendered as text.
    c.accept = match (asked, mode) {
        (Some(f), _) => Some(f),
        (None, Mode::Json | Mode::Pretty) => Some(ContentFormat::JSON),
        (None, Mode::Raw) => None,
    };
    let overrides = [
        ("eo", a.eo.clone()),
        ("enr", a.enr.map(|n| n.to_string())),
        ("emt", a.emt.clone()),
        ("delay", a.delay.clone()),
    ];
    c.queries = overrides
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
        .collect();
    let r = c.send(client).await?;
    // 5.04: fewer than enr members answered; the body is still the combined reply.
    let partial = r.code == Code::GATEWAY_TIMEOUT && !r.payload.is_empty();
    if r.is_success() || partial {
        match (mode, asked) {
            (Mode::Json, _) => print_json(&r)?,
            (Mode::Raw, _) => print_raw(&r)?,
            (Mode::Pretty, None) => print_text(&render::combined(&json_payload(&r)?))?,
            (Mode::Pretty, Some(_)) => print_text(
                &crate::render::payload::Payload::new(&r.payload, r.content_format())
                    .body_text(true),
            )?,
        }
    }
    if partial {
        return Err(Failure::new(
            ExitKind::ServerError,
            format!(
                "{}: fewer members answered than the entity waits for",
                code_label(r.code)
            ),
        ));
    }
    outcome(&r, mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gateway_uris() {
        assert_eq!(base_uri("coap://[::1]").unwrap(), "coap://[::1]");
        assert_eq!(base_uri("coap://[::1]:5684/").unwrap(), "coap://[::1]:5684");
        assert_eq!(base_uri("coap://127.0.0.1/e").unwrap(), "coap://127.0.0.1");
        assert_eq!(
            base_uri("coap://[::1]/x").unwrap_err().kind,
            ExitKind::Usage
        );
        assert_eq!(
            base_uri("coap://[::1]/e?x").unwrap_err().kind,
            ExitKind::Usage
        );
        assert_eq!(base_uri("coap://[::1").unwrap_err().kind, ExitKind::Usage);
    }
}
