//! The DTLS flags of every command that speaks `coaps://`: libcoap's `-u IDENTITY -k KEY`, a
//! file of `identity:key` lines, or a PEM certificate and key. Bad credentials are a
//! [`CredentialsError`]: a usage error, but for an unreadable file. The servers' own flags
//! (client certificates, CAs) are theirs, in `covey-cli`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use covey::dtls::{CertifiedKey, CredentialsError, DtlsConfig, PskKeys};

/// DTLS credentials for `coaps://`.
#[derive(Debug, Clone, Default, Args)]
pub struct DtlsArgs {
    /// coaps: the pre-shared key identity (with -k).
    #[arg(
        short = 'u',
        long = "psk-identity",
        value_name = "IDENTITY",
        requires = "psk_key"
    )]
    pub psk_identity: Option<String>,

    /// coaps: the pre-shared key, as text (with -u).
    #[arg(
        short = 'k',
        long = "psk-key",
        value_name = "KEY",
        requires = "psk_identity"
    )]
    pub psk_key: Option<String>,

    /// coaps: pre-shared keys, one identity:key line each (a key starting 0x is hex); a
    /// client uses the first line, a server accepts any.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["psk_identity", "cert"])]
    pub psk_file: Option<PathBuf>,

    /// coaps: an ECDSA certificate (PEM; P-256 or P-384), with --key.
    #[arg(
        long,
        value_name = "FILE",
        requires = "key",
        conflicts_with = "psk_identity"
    )]
    pub cert: Option<PathBuf>,

    /// coaps: the private key of --cert (PEM).
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
}

impl DtlsArgs {
    /// The DTLS configuration the flags give; `None` without credentials.
    pub fn config(&self) -> Result<Option<DtlsConfig>, CredentialsError> {
        let config = if let (Some(identity), Some(key)) = (&self.psk_identity, &self.psk_key) {
            DtlsConfig::psk(PskKeys::single(identity, key.as_bytes())?)
        } else if let Some(path) = &self.psk_file {
            DtlsConfig::psk(PskKeys::from_file(path)?)
        } else if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            DtlsConfig::certificate(CertifiedKey::from_pem_files(cert, key)?)
        } else {
            return Ok(None);
        };
        Ok(Some(config))
    }

    /// [`config`](Self::config) for a client whose requests give up after `timeout`: its
    /// handshakes give up at three quarters of it, so a refused key is reported as such
    /// rather than as a request timeout.
    pub fn client_config(&self, timeout: Duration) -> Result<Option<DtlsConfig>, CredentialsError> {
        Ok(self.config()?.map(|mut config| {
            config.limits.handshake_timeout = config.limits.handshake_timeout.min(timeout * 3 / 4);
            config
        }))
    }
}
