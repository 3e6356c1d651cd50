//! The flags every client command shares: libcoap's short ones and aiocoap-style long ones.

use clap::{ArgAction, Args};

/// The engine's limit on a block-wise body unless --max-body-size changes it (1 MiB).
use super::progress::default_timeout;
use crate::commands::dtls_args::DtlsArgs;

pub const DEFAULT_MAX_BODY_SIZE: usize = 1 << 20;

/// Arguments of `covey get|put|post|delete|fetch|observe|discover`.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// The resource, e.g. coap://[::1]/sensors/temp (a multicast address asks a group).
    #[arg(value_name = "URI")]
    pub uri: Option<String>,

    /// Method instead of the command's own (GET, POST, PUT, DELETE, FETCH, PATCH, iPATCH).
    #[arg(short = 'm', long, value_name = "METHOD")]
    pub method: Option<String>,

    /// Payload: text, @FILE to read a file, or @- to read standard input.
    #[arg(short = 'e', long, value_name = "PAYLOAD")]
    pub payload: Option<String>,

    /// Content-Format of the payload, by name (json, cbor, text, link, ...) or number.
    #[arg(short = 't', long = "content-format", value_name = "FORMAT")]
    pub content_format: Option<String>,

    /// Accept option: the format wanted back, by name or number.
    #[arg(short = 'A', long, value_name = "FORMAT")]
    pub accept: Option<String>,

    /// Send a non-confirmable request.
    #[arg(short = 'N', long)]
    pub non: bool,

    /// Observe the resource for SECS seconds (no value, or 0: until interrupted).
    #[arg(short = 's', long, value_name = "SECS", num_args = 0..=1, default_missing_value = "0")]
    pub observe: Option<String>,

    /// Block size for block-wise transfers (16, 32, ..., 1024).
    #[arg(short = 'b', long = "block-size", value_name = "SIZE")]
    pub block_size: Option<usize>,

    /// Largest body sent or received block-wise, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BODY_SIZE)]
    pub max_body_size: usize,

    /// Extra option NUM,VALUE (NUM a number or name; VALUE a number for uint options, none
    /// for empty ones, else text or 0x-prefixed hex; checked against the option's format).
    /// Repeatable.
    #[arg(short = 'O', long = "option", value_name = "NUM,VALUE")]
    pub options: Vec<String>,

    /// Token as hex (up to 8 bytes).
    #[arg(short = 'T', long, value_name = "HEX")]
    pub token: Option<String>,

    /// Give up after SECS seconds without a response (the default is RFC 7252's
    /// MAX_TRANSMIT_WAIT, when the last retransmission is given up anyway).
    #[arg(short = 'B', long, value_name = "SECS", default_value_t = default_timeout())]
    pub timeout: f64,

    /// Report each retransmission on standard error, even when it is not a terminal.
    #[arg(long)]
    pub progress: bool,

    /// Print every message exchanged to standard error (-vv also logs the driver).
    #[arg(short = 'v', long, action = ArgAction::Count)]
    pub verbose: u8,

    /// Print one JSON object per response (code, options, payload, timing).
    #[arg(long)]
    pub json: bool,

    /// DTLS credentials for coaps:// URIs.
    #[command(flatten)]
    pub dtls: DtlsArgs,

    /// Protect the request with OSCORE (RFC 8613) under the security context in DIR, in
    /// aiocoap's layout (settings.json and secret.json): each block and notification too;
    /// not for multicast.
    #[arg(long, value_name = "DIR")]
    pub oscore: Option<std::path::PathBuf>,

    /// Set up an OSCORE context with the server by EDHOC (RFC 9528) first, with this end's
    /// credential and the trusted servers' in DIR/edhoc.json, and protect the request with
    /// it; same limits as --oscore. Its last EDHOC message rides in the request itself
    /// (RFC 9668), saving a round trip.
    #[arg(long, value_name = "DIR", conflicts_with = "oscore")]
    pub edhoc: Option<std::path::PathBuf>,

    /// With --edhoc, send EDHOC's message_3 on its own to /.well-known/edhoc and verify the
    /// server's message_4 before the request, for servers that do not take RFC 9668's
    /// EDHOC + OSCORE request.
    #[arg(long, requires = "edhoc")]
    pub edhoc_separate: bool,
}
