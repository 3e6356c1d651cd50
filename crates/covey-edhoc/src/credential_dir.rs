//! An EDHOC credential directory: `DIR/edhoc.json` holds this endpoint's credential with its
//! private key and the peers' trusted credentials, all hex-encoded (documented in
//! docs/security.md).

use crate::credential::{OwnIdentity, TrustedPeers};
use crate::error::EdhocError;
use serde::Deserialize;
use std::path::Path;

/// The file inside a credential directory.
pub const FILE_NAME: &str = "edhoc.json";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    own: OwnFile,
    trusted: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OwnFile {
    ccs: String,
    private_key: String,
}

/// Reads `dir/edhoc.json` into this endpoint's identity and the peers it trusts.
pub fn load(dir: &Path) -> Result<(OwnIdentity, TrustedPeers), EdhocError> {
    let path = dir.join(FILE_NAME);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| EdhocError::Credential(format!("{}: {e}", path.display())))?;
    parse(&text).map_err(|e| EdhocError::Credential(format!("{}: {e}", path.display())))
}

/// Parses the JSON text of an `edhoc.json`.
pub fn parse(text: &str) -> Result<(OwnIdentity, TrustedPeers), EdhocError> {
    let file: File =
        serde_json::from_str(text).map_err(|e| EdhocError::Credential(e.to_string()))?;
    let own = OwnIdentity::new(
        &unhex("own.ccs", &file.own.ccs)?,
        &unhex("own.private_key", &file.own.private_key)?,
    )?;
    let trusted: Vec<Vec<u8>> = file
        .trusted
        .iter()
        .map(|ccs| unhex("trusted", ccs))
        .collect::<Result<_, _>>()?;
    let trusted = TrustedPeers::new(trusted.iter().map(Vec::as_slice))?;
    Ok((own, trusted))
}

fn unhex(field: &str, text: &str) -> Result<Vec<u8>, EdhocError> {
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return Err(EdhocError::Credential(format!("{field} is not hex")));
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16))
        .collect::<Result<_, _>>()
        .map_err(|_| EdhocError::Credential(format!("{field} is not hex")))
}
