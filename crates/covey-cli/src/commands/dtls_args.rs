//! The DTLS flags of every command that speaks `coaps://` ([`DtlsArgs`], shared with the
//! benchmarks through `covey-cli-base`) and those of the servers only: client certificates,
//! trust anchors and where they listen.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use covey::dtls::{DtlsConfig, TrustAnchors};
pub use covey_cli_base::dtls::DtlsArgs;

use crate::exit::{ExitKind, Failure};

/// The DTLS flags only a server takes (`covey serve`, `covey gateway`): asking clients for a
/// certificate, and the CAs that vouch for it.
#[derive(Debug, Clone, Default, Args)]
pub struct ClientCertificateArgs {
    /// coaps server: ask clients for a certificate too (with --cert), so requests carry it.
    #[arg(long, requires = "cert")]
    pub require_client_cert: bool,

    /// coaps server: the CAs (PEM, one or more certificates) that vouch for client
    /// certificates. A client's subject counts (for subject: rules of --policy) only when its
    /// certificate was issued by one of them, is valid now and allows client authentication.
    /// Asks clients for a certificate, as --require-client-cert does.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub ca: Option<PathBuf>,
}

impl ClientCertificateArgs {
    /// Whether `--ca` was given.
    pub fn given(&self) -> bool {
        self.ca.is_some()
    }

    /// `config` asking clients for a certificate as the flags say, with the trust anchors of
    /// `--ca` if given.
    pub fn apply(&self, config: Option<DtlsConfig>) -> Result<Option<DtlsConfig>, Failure> {
        let Some(mut config) = config else {
            return Ok(None);
        };
        config.require_client_certificate = self.require_client_cert;
        if let Some(path) = &self.ca {
            config.trust_anchors = Some(TrustAnchors::from_pem_file(path)?);
            config.require_client_certificate = true;
        }
        Ok(Some(config))
    }
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
