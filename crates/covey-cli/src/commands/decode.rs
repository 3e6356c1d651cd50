//! `covey decode`: show one CoAP message given as hex or on standard input.

use std::io::IsTerminal;

use anyhow::anyhow;
use clap::Args;
use covey_core::Message;

use crate::exit::{ExitKind, Failure};
use crate::input::read_datagram;
use crate::output::{print, stdout_is_terminal};
use crate::render::{message_json, message_text};

/// Arguments of `covey decode`.
#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// The message as hex (spaces, colons and 0x prefixes allowed); none or `-` reads
    /// standard input (hex text, or else the raw datagram).
    #[arg(value_name = "HEX|-")]
    input: Vec<String>,

    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Decodes the datagram and prints it; a malformed message is an error naming its byte.
pub fn run(args: &DecodeArgs) -> Result<(), Failure> {
    let dash = ["-".to_string()];
    let words = match args.input.as_slice() {
        // Nothing given and nothing piped: waiting for typed hex would look like a hang.
        [] if std::io::stdin().is_terminal() => {
            return Err(Failure::new(
                ExitKind::Usage,
                "no message: give it as hex, or pipe it to standard input",
            ))
        }
        [] => &dash[..],
        words => words,
    };
    Ok(decode(words, args.json)?)
}

fn decode(words: &[String], json: bool) -> anyhow::Result<()> {
    let bytes = read_datagram(words)?;
    let message = Message::parse(&bytes)
        .and_then(|m| m.validate_options().map(|()| m))
        .map_err(|e| anyhow!("bad message {e}"))?;
    let out = if json {
        message_json::render(&message).to_string() + "\n"
    } else {
        message_text::render(&message, stdout_is_terminal())
    };
    print(&out)
}
