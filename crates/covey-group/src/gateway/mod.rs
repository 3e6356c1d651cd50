//! The EM served over UDP on covey's tokio driver, as `covey gateway` runs it: the addresses
//! it is reached at (so it recognises URIs naming itself), the clock origin of its SenML
//! times, and the driver.

mod error;
mod local_addresses;

pub use error::GatewayError;
pub use local_addresses::reached_at;

use crate::{BackgroundStore, EmConfig, EmError, EntityManager, Store};
use covey::{Config, Driver};
use std::net::{SocketAddr, UdpSocket};

/// Where a gateway listens and what it logs.
pub struct Sockets {
    /// The addresses to bind (port 0: a free port): coaps with `dtls`, else coap.
    pub binds: Vec<SocketAddr>,
    /// Addresses to bind in plain coap besides (with `dtls`: the EM then reaches coap://
    /// members from them and coaps:// members over DTLS).
    pub plain_binds: Vec<SocketAddr>,
    /// Let other sockets that share it bind the port too.
    pub share_port: bool,
    /// Called for every datagram (the request log).
    pub trace: Option<covey::driver::TraceFn>,
    /// DTLS credentials: the gateway speaks coaps on `binds`, to clients and to coaps://
    /// members (with these credentials as its identity).
    pub dtls: Option<covey::dtls::DtlsConfig>,
    /// OSCORE contexts (RFC 8613), one per client: the gateway verifies requests under their
    /// Recipient IDs and protects the answers, and the policy names such clients `oscore:KID`;
    /// each with what keeps its sequence numbers reserved ahead, if anything does.
    pub oscore: Vec<(
        covey_proto::covey_oscore::SecurityContext,
        Option<covey::SequenceReservation>,
    )>,
}

impl Sockets {
    /// `binds`, not shared, untraced.
    pub fn on(binds: &[SocketAddr]) -> Sockets {
        Sockets {
            binds: binds.to_vec(),
            plain_binds: Vec::new(),
            share_port: false,
            trace: None,
            dtls: None,
            oscore: Vec::new(),
        }
    }
}

/// A running Entity Manager on its own driver.
#[derive(Debug)]
pub struct Gateway {
    /// The driver serving the EM.
    pub driver: Driver,
    /// The addresses the EM takes as its own.
    pub authorities: Vec<SocketAddr>,
    /// Entities loaded from the store at start.
    pub entities: usize,
}

impl Gateway {
    /// Binds `sockets.binds` (port 0 replaced by a free port), tells the EM the addresses it is
    /// reached at, and serves it on the current tokio runtime with the engine `config`
    /// (usually [`EmConfig::engine_config`]). `store` is written from a thread of its own
    /// ([`BackgroundStore`]) so a slow disk never stalls the driver. The engine's PRNG is
    /// seeded afresh at every start, so message IDs and tokens differ from those of a
    /// previous run.
    pub fn start(
        sockets: Sockets,
        mut em: EmConfig,
        store: Box<dyn Store>,
        config: Config,
    ) -> Result<Gateway, GatewayError> {
        let concrete = |binds: &[SocketAddr]| {
            binds
                .iter()
                .map(|b| concrete_port(*b))
                .collect::<Result<Vec<_>, _>>()
        };
        let binds = concrete(&sockets.binds)?;
        let plain_binds = concrete(&sockets.plain_binds)?;
        let mut authorities = std::mem::take(&mut em.authorities);
        for bind in binds.iter().chain(&plain_binds) {
            for a in reached_at(*bind) {
                if !authorities.contains(&a) {
                    authorities.push(a);
                }
            }
        }
        em.authorities = authorities.clone();
        em.epoch = Some(unix_now());
        let store = BackgroundStore::spawn(store).map_err(EmError::Store)?;
        let manager = EntityManager::new(em, Box::new(store))?;
        let entities = manager.entities().count();
        let mut builder = Driver::with_app(Box::new(manager))
            .config(config)
            .share_port(sockets.share_port);
        if let Some(trace) = sockets.trace {
            builder = builder.trace(trace);
        }
        let secured = sockets.dtls.is_some();
        if let Some(dtls) = sockets.dtls {
            builder = builder.dtls(dtls);
        }
        for (context, reserve) in sockets.oscore {
            builder = match reserve {
                Some(reserve) => builder.oscore_context_reserving(context, reserve),
                None => builder.oscore_context(context),
            };
        }
        for b in &binds {
            builder = match secured {
                true => builder.bind_secure(*b),
                false => builder.bind(*b),
            };
        }
        for b in &plain_binds {
            builder = builder.bind(*b);
        }
        let driver = builder.spawn()?;
        Ok(Gateway {
            driver,
            authorities,
            entities,
        })
    }
}

/// `addr`, or with port 0 a port that was free a moment ago (the EM must know its port
/// before the socket is bound).
fn concrete_port(addr: SocketAddr) -> Result<SocketAddr, GatewayError> {
    if addr.port() != 0 {
        return Ok(addr);
    }
    UdpSocket::bind(addr)
        .and_then(|s| s.local_addr())
        .map_err(|source| GatewayError::Bind { addr, source })
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_zero_becomes_a_real_port() {
        let a = concrete_port("127.0.0.1:0".parse().unwrap()).unwrap();
        assert_ne!(a.port(), 0);
    }
}
