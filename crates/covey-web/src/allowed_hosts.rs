//! Protection against DNS rebinding: a page from another site whose name was made to
//! resolve to this host reaches the console with its own name in `Host`, so only requests
//! naming the bound address, localhost or a name given with `--http-allow-host` are served.
//! An IP literal cannot be rebound, so when the console listens on every address
//! (0.0.0.0 or ::) any literal passes.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::uri::Authority;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The host names the HTTP side answers to.
#[derive(Debug, Clone)]
pub struct AllowedHosts {
    bound: IpAddr,
    names: Vec<String>,
}

impl AllowedHosts {
    /// Hosts for a console bound to `bound`, plus `names` (compared without case).
    pub fn new(bound: SocketAddr, names: &[String]) -> AllowedHosts {
        AllowedHosts {
            bound: bound.ip(),
            names: names.iter().map(|n| normalise(n)).collect(),
        }
    }

    /// True when a request whose `Host` is `host` (with or without a port) may be served.
    pub fn allows(&self, host: &str) -> bool {
        let Ok(authority) = host.parse::<Authority>() else {
            return false;
        };
        let name = normalise(authority.host());
        if name == "localhost" || self.names.contains(&name) {
            return true;
        }
        let literal = name.trim_start_matches('[').trim_end_matches(']');
        literal
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip == self.bound || self.bound.is_unspecified())
    }
}

/// Lower case, without the trailing dot of a fully qualified name.
fn normalise(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// Middleware: serves requests naming an allowed host, answers 403 to the others (and 400
/// to a request naming none).
pub async fn known_hosts_only(
    State(allowed): State<Arc<AllowedHosts>>,
    request: Request,
    next: Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    match host {
        Some(host) if allowed.allows(&host) => next.run(request).await,
        Some(host) => (
            StatusCode::FORBIDDEN,
            format!(
                "host {host:?} refused: the console answers to its address and localhost; \
                 give other names with --http-allow-host\n"
            ),
        )
            .into_response(),
        None => (StatusCode::BAD_REQUEST, "a Host header is required\n").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(bound: &str, names: &[&str]) -> AllowedHosts {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        AllowedHosts::new(bound.parse().unwrap(), &names)
    }

    #[test]
    fn the_bound_address_and_localhost_pass() {
        let hosts = on("127.0.0.1:8080", &[]);
        for host in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "localhost:8080",
            "LOCALHOST",
            "localhost.",
        ] {
            assert!(hosts.allows(host), "{host}");
        }
        let v6 = on("[::1]:8080", &[]);
        assert!(v6.allows("[::1]:8080"));
        assert!(!v6.allows("127.0.0.1:8080"));
    }

    #[test]
    fn other_names_and_addresses_are_refused_unless_given() {
        let hosts = on("127.0.0.1:8080", &["Gateway.Lan"]);
        for host in [
            "evil.example:8080",
            "127.0.0.2:8080",
            "localhost.evil.example",
            "",
            "a b",
        ] {
            assert!(!hosts.allows(host), "{host}");
        }
        assert!(hosts.allows("gateway.lan:8080"));
        assert!(hosts.allows("GATEWAY.LAN"));
    }

    #[test]
    fn any_literal_passes_when_bound_to_every_address_but_names_do_not() {
        let hosts = on("0.0.0.0:8080", &[]);
        assert!(hosts.allows("192.0.2.7:8080"));
        assert!(hosts.allows("[2001:db8::1]:8080"));
        assert!(!hosts.allows("rebound.example:8080"));
    }
}
