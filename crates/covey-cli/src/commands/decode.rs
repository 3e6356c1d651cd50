//! `covey decode`: show one CoAP message given as hex or on standard input.

use anyhow::anyhow;
use clap::Args;
use covey_core::Message;

use crate::input::read_datagram;
use crate::output::{print, stdout_is_terminal};
use crate::render::{message_json, message_text};

/// Arguments of `covey decode`.
#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// The message as hex (spaces, colons and 0x prefixes allowed), or `-` to read standard
    /// input (hex text, or else the raw datagram).
    #[arg(value_name = "HEX|-", required = true, allow_hyphen_values = true)]
    input: Vec<String>,

    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Decodes the datagram and prints it; a malformed message is an error naming its byte.
pub fn run(args: &DecodeArgs) -> anyhow::Result<()> {
    let bytes = read_datagram(&args.input)?;
    let message = Message::parse(&bytes)
        .and_then(|m| m.validate_options().map(|()| m))
        .map_err(|e| anyhow!("bad message {e}"))?;
    let out = if args.json {
        message_json::render(&message).to_string() + "\n"
    } else {
        message_text::render(&message, stdout_is_terminal())
    };
    print(&out)
}
