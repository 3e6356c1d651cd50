//! The flags of `covey discover`: those of a GET, without payload, method or observe.

use clap::{ArgAction, Args};

use super::progress::default_timeout;
use super::ClientArgs;
use crate::commands::dtls_args::DtlsArgs;

/// Examples shown by `covey discover --help`.
pub const DISCOVER_EXAMPLES: &str = "\
Examples:
  covey discover coap://[::1]                      every resource of the server
  covey discover 'coap://[::1]?rt=temperature-c'   those with rt=temperature-c (RFC 6690 filter)
  covey discover 'coap://[::1]?href=/sensors*'     those whose path starts with /sensors
  covey discover 'coap://[ff02::fd%25eth0]'       every server of a multicast group";

/// Arguments of `covey discover`.
#[derive(Debug, Args)]
pub struct DiscoverArgs {
    /// The server, e.g. coap://[::1]; its /.well-known/core is asked whatever the path, and
    /// the query filters the links (e.g. ?rt=temperature-c).
    #[arg(value_name = "URI")]
    pub uri: Option<String>,

    /// Accept option: the format wanted back (link, or a number).
    #[arg(short = 'A', long, value_name = "FORMAT")]
    pub accept: Option<String>,

    /// Send a non-confirmable request.
    #[arg(short = 'N', long)]
    pub non: bool,

    /// Block size for block-wise transfers (16, 32, ..., 1024).
    #[arg(short = 'b', long = "block-size", value_name = "SIZE")]
    pub block_size: Option<usize>,

    /// Extra option NUM,VALUE (see covey get --help). Repeatable.
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
}

impl From<DiscoverArgs> for ClientArgs {
    fn from(d: DiscoverArgs) -> ClientArgs {
        ClientArgs {
            uri: d.uri,
            method: None,
            payload: None,
            content_format: None,
            accept: d.accept,
            non: d.non,
            observe: None,
            block_size: d.block_size,
            max_body_size: super::args::DEFAULT_MAX_BODY_SIZE,
            options: d.options,
            token: d.token,
            timeout: d.timeout,
            progress: d.progress,
            verbose: d.verbose,
            json: d.json,
            dtls: d.dtls,
            oscore: None,
            edhoc: None,
            edhoc_separate: false,
        }
    }
}
