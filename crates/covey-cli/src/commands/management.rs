//! Who may manage a server (entities on `covey gateway`, `/mc` on `covey serve`): the
//! `--policy` and `--open-management` options both commands share.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use covey_group::authorization::{Access, Policy};

use crate::exit::{ExitKind, Failure};

/// The management options.
#[derive(Debug, Args)]
pub struct ManagementArgs {
    /// Authorize management requests by the rules of this policy file (TOML: who may read,
    /// create, change, delete, fan out, join and leave groups; see docs/authorization.md).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,

    /// Let anyone who reaches the server manage it, without authentication. Without it (and
    /// without --policy) only clients on this host (loopback) may.
    #[arg(long, conflicts_with = "policy")]
    pub open_management: bool,
}

impl ManagementArgs {
    /// Whether either option was given.
    pub fn given(&self) -> bool {
        self.policy.is_some() || self.open_management
    }

    /// How requests are authorized. `secured`: DTLS keys were given, so without a policy
    /// file any authenticated peer may manage and requests in the clear may not;
    /// `trust_anchor`: `--ca` was given, without which a policy may not name subjects.
    /// Without security the server must listen on loopback (or everywhere) for its
    /// loopback-only default to be of use: `binds` are checked for that (none given: the
    /// default wildcard).
    pub fn access(
        &self,
        secured: bool,
        trust_anchor: bool,
        binds: &[SocketAddr],
    ) -> Result<Access, Failure> {
        if let Some(path) = &self.policy {
            let policy = Policy::load(path).map_err(|e| usage(e.to_string()))?;
            policy
                .check_subjects(trust_anchor)
                .map_err(|e| usage(e.to_string()))?;
            return Ok(Access::Policy(Arc::new(policy)));
        }
        if secured {
            if self.open_management {
                return Err(usage(
                    "--open-management is for servers without keys; with keys, a --policy \
                     with who = [\"anyone\"] opens management",
                ));
            }
            return Ok(Access::Policy(Arc::new(Policy::authenticated())));
        }
        if self.open_management {
            return Ok(Access::Open);
        }
        let local = |a: &SocketAddr| a.ip().is_loopback() || a.ip().is_unspecified();
        if !binds.is_empty() && !binds.iter().any(local) {
            return Err(usage(
                "without --policy only loopback clients may manage this server, and no \
                 --bind address is loopback: add --open-management to let anyone manage it, \
                 or --policy FILE",
            ));
        }
        Ok(Access::LoopbackOnly)
    }
}

fn usage(message: impl Into<String>) -> Failure {
    Failure::new(ExitKind::Usage, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(policy: Option<&str>, open: bool) -> ManagementArgs {
        ManagementArgs {
            policy: policy.map(PathBuf::from),
            open_management: open,
        }
    }

    #[test]
    fn without_security_management_stays_on_loopback_unless_opened() {
        let wildcard: SocketAddr = "[::]:5683".parse().unwrap();
        let lan: SocketAddr = "192.0.2.7:5683".parse().unwrap();
        let a = args(None, false).access(false, false, &[wildcard]).unwrap();
        assert!(matches!(a, Access::LoopbackOnly));
        let e = args(None, false).access(false, false, &[lan]).unwrap_err();
        assert_eq!(e.kind, ExitKind::Usage);
        assert!(e.message.contains("--open-management"), "{}", e.message);
        let a = args(None, true).access(false, false, &[lan]).unwrap();
        assert!(matches!(a, Access::Open));
        let a = args(None, false).access(false, false, &[lan, "127.0.0.1:5683".parse().unwrap()]);
        assert!(matches!(a, Ok(Access::LoopbackOnly)));
        let a = args(None, false).access(false, false, &[]).unwrap();
        assert!(matches!(a, Access::LoopbackOnly));
    }

    #[test]
    fn keys_without_a_policy_need_an_identity() {
        let a = args(None, false).access(true, false, &[]).unwrap();
        let Access::Policy(p) = a else {
            panic!("{a:?}")
        };
        assert_eq!(p.rules(), 1);
        assert!(args(None, true).access(true, false, &[]).is_err());
    }

    #[test]
    fn a_bad_policy_file_is_a_usage_error_of_one_line() {
        let e = args(Some("/nonexistent/policy.toml"), false)
            .access(false, false, &[])
            .unwrap_err();
        assert_eq!(e.kind, ExitKind::Usage);
        assert!(
            e.message.starts_with("/nonexistent/policy.toml: "),
            "{}",
            e.message
        );
    }
}
