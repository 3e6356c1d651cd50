//! The DTLS flags of every command that speaks `coaps://`: libcoap's `-u IDENTITY -k KEY`, a
//! file of `identity:key` lines, or a PEM certificate and key.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use covey::dtls::{CertifiedKey, CredentialsError, DtlsConfig, PskKeys, TrustAnchors};

use crate::exit::{ExitKind, Failure};

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

    /// coaps server: ask clients for a certificate too (with --cert), so requests carry it.
    #[arg(long, requires = "cert")]
    pub require_client_cert: bool,
}

impl DtlsArgs {
    /// The DTLS configuration the flags give; `None` without credentials.
    pub fn config(&self) -> Result<Option<DtlsConfig>, Failure> {
        let mut config = if let (Some(identity), Some(key)) = (&self.psk_identity, &self.psk_key) {
            DtlsConfig::psk(PskKeys::single(identity, key.as_bytes()).map_err(failure)?)
        } else if let Some(path) = &self.psk_file {
            DtlsConfig::psk(PskKeys::from_file(path).map_err(failure)?)
        } else if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            DtlsConfig::certificate(CertifiedKey::from_pem_files(cert, key).map_err(failure)?)
        } else {
            return Ok(None);
        };
        config.require_client_certificate = self.require_client_cert;
        Ok(Some(config))
    }

    /// [`config`](Self::config) for a client whose requests give up after `timeout`: its
    /// handshakes give up at three quarters of it, so a refused key is reported as such
    /// rather than as a request timeout.
    pub fn client_config(&self, timeout: Duration) -> Result<Option<DtlsConfig>, Failure> {
        Ok(self.config()?.map(|mut config| {
            config.limits.handshake_timeout = config.limits.handshake_timeout.min(timeout * 3 / 4);
            config
        }))
    }
}

/// The trust anchors of a server (`covey serve`, `covey gateway`).
#[derive(Debug, Clone, Default, Args)]
pub struct CaArgs {
    /// coaps server: the CAs (PEM, one or more certificates) that vouch for client
    /// certificates. A client's subject counts (for subject: rules of --policy) only when its
    /// certificate was issued by one of them, is valid now and allows client authentication.
    /// Asks clients for a certificate, as --require-client-cert does.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub ca: Option<PathBuf>,
}

impl CaArgs {
    /// Whether `--ca` was given.
    pub fn given(&self) -> bool {
        self.ca.is_some()
    }

    /// `config` with the trust anchors of `--ca`, if given.
    pub fn apply(&self, config: Option<DtlsConfig>) -> Result<Option<DtlsConfig>, Failure> {
        let (Some(path), Some(mut config)) = (&self.ca, config.clone()) else {
            return Ok(config);
        };
        config.trust_anchors = Some(TrustAnchors::from_pem_file(path).map_err(failure)?);
        config.require_client_certificate = true;
        Ok(Some(config))
    }
}

/// Bad credentials: a usage error, or an unreadable file.
fn failure(e: CredentialsError) -> Failure {
    let kind = match e {
        CredentialsError::Read { .. } => ExitKind::Other,
        _ => ExitKind::Usage,
    };
    Failure::new(kind, e.to_string())
}

/// The addresses a server listens on, by scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listen {
    /// `coaps` with DTLS keys, else `coap`: the `--bind` addresses.
    pub binds: Vec<SocketAddr>,
    /// Plain `coap` beside `coaps` (keys given): the `--bind-plain` addresses.
    pub plain: Vec<SocketAddr>,
}

/// Where a server listens: the `--bind` addresses (coaps with keys), else `[::]:5683`, or
/// with keys `[::]:5684`; with keys also the `--bind-plain` addresses in plain coap, and
/// `[::]:5683` when neither option was given, so one server answers both schemes.
pub fn listen(
    binds: &[SocketAddr],
    plain: &[SocketAddr],
    secured: bool,
) -> Result<Listen, Failure> {
    let any = |port| SocketAddr::from(([0u16; 8], port));
    if !secured {
        if !plain.is_empty() {
            return Err(Failure::new(
                ExitKind::Usage,
                "--bind-plain adds coap beside coaps and needs DTLS keys; without keys --bind is coap",
            ));
        }
        return Ok(Listen {
            binds: match binds.is_empty() {
                true => vec![any(covey::DEFAULT_PORT)],
                false => binds.to_vec(),
            },
            plain: Vec::new(),
        });
    }
    Ok(Listen {
        binds: match binds.is_empty() {
            true => vec![any(covey::dtls::DEFAULT_PORT)],
            false => binds.to_vec(),
        },
        plain: match (binds.is_empty(), plain.is_empty()) {
            (true, true) => vec![any(covey::DEFAULT_PORT)],
            _ => plain.to_vec(),
        },
    })
}

/// The start-up line of each address the driver listens on, with its scheme.
pub fn log_listening(driver: &covey::Driver) {
    let secured = driver.secured_addrs();
    for addr in driver.local_addrs() {
        let scheme = if secured.contains(addr) {
            "coaps"
        } else {
            "coap"
        };
        tracing::info!("listening on {addr} ({scheme})");
    }
}

#[cfg(test)]
mod listen_tests {
    use super::*;

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn keys_without_addresses_listen_on_both_schemes() {
        let both = listen(&[], &[], true).unwrap();
        assert_eq!(both.binds, [addr("[::]:5684")]);
        assert_eq!(both.plain, [addr("[::]:5683")]);
        let plain_only = listen(&[], &[], false).unwrap();
        assert_eq!(plain_only.binds, [addr("[::]:5683")]);
        assert!(plain_only.plain.is_empty());
    }

    #[test]
    fn given_addresses_say_which_scheme() {
        let coaps_only = listen(&[addr("127.0.0.1:6000")], &[], true).unwrap();
        assert_eq!(coaps_only.binds, [addr("127.0.0.1:6000")]);
        assert!(coaps_only.plain.is_empty());
        let mixed = listen(&[], &[addr("127.0.0.1:6001")], true).unwrap();
        assert_eq!(mixed.binds, [addr("[::]:5684")]);
        assert_eq!(mixed.plain, [addr("127.0.0.1:6001")]);
        let e = listen(&[], &[addr("127.0.0.1:6001")], false).unwrap_err();
        assert_eq!(e.kind, ExitKind::Usage);
        assert!(e.message.contains("--bind-plain"), "{}", e.message);
    }
}
