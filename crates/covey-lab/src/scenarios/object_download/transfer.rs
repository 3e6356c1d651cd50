//! The transfer services compared: CoAP, HTTP/1.1 over a new TCP connection per object,
//! persistent HTTP/1.1, HTTP/2 (in SPDY's place), and HTTP/1.1 messages in UDP datagrams.

use std::net::{Ipv4Addr, SocketAddr};

use covey_emu::stacks::{coap, http, http_udp, Agent, RunFor};
use serde::Serialize;

/// CoAP's block size exponent: 512-byte blocks, the largest whose datagram fits the
/// link's 576-byte MTU (covey's sockets set don't-fragment).
pub const BLOCK_SZX: u8 = 5;

/// The CoAP port.
const COAP_PORT: u16 = 5683;
/// The HTTP/1.1 port.
const HTTP1_PORT: u16 = 8080;
/// The HTTP/2 port.
const H2_PORT: u16 = 8081;
/// The HTTP/UDP port.
const HTTP_UDP_PORT: u16 = 8082;

/// One transfer service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transfer {
    /// CoAP CON GET (covey), block-wise above 512 bytes.
    Coap,
    /// HTTP/1.1, one TCP connection per object.
    HttpClose,
    /// HTTP/1.1 on one persistent connection.
    HttpKeepAlive,
    /// HTTP/2 (prior knowledge) on one connection.
    Http2,
    /// HTTP/1.1 text in UDP datagrams.
    HttpUdp,
}

impl Transfer {
    /// Every service, in report order.
    pub const ALL: [Transfer; 5] = [
        Transfer::Coap,
        Transfer::HttpClose,
        Transfer::HttpKeepAlive,
        Transfer::Http2,
        Transfer::HttpUdp,
    ];

    /// The label in tables and plots.
    pub fn label(self) -> &'static str {
        match self {
            Transfer::Coap => "CoAP",
            Transfer::HttpClose => "HTTP/TCP",
            Transfer::HttpKeepAlive => "persistent HTTP",
            Transfer::Http2 => "HTTP/2",
            Transfer::HttpUdp => "HTTP/UDP",
        }
    }

    /// The server agent, serving at `server`.
    pub fn server(self, server: Ipv4Addr, run_for: RunFor) -> Agent {
        match self {
            Transfer::Coap => Agent::Coap(coap::Role::ObjectServer {
                listen: SocketAddr::from((server, COAP_PORT)),
                block_szx: BLOCK_SZX,
                run_for,
            }),
            Transfer::HttpClose | Transfer::HttpKeepAlive | Transfer::Http2 => {
                Agent::Http(http::Role::Serve {
                    http1: SocketAddr::from((server, HTTP1_PORT)),
                    h2: SocketAddr::from((server, H2_PORT)),
                    run_for,
                })
            }
            Transfer::HttpUdp => Agent::HttpUdp(http_udp::Role::Serve {
                listen: SocketAddr::from((server, HTTP_UDP_PORT)),
                run_for,
            }),
        }
    }

    /// The client agent downloading `sizes` from `server`.
    pub fn client(self, server: Ipv4Addr, sizes: Vec<u64>, cc: &str) -> Agent {
        let http = |mode, port| {
            Agent::Http(http::Role::Download {
                server: SocketAddr::from((server, port)),
                mode,
                sizes: sizes.clone(),
            })
        };
        match self {
            Transfer::Coap => Agent::Coap(coap::Role::Download {
                server: SocketAddr::from((server, COAP_PORT)),
                sizes,
                cc: cc.to_string(),
            }),
            Transfer::HttpClose => http(http::Mode::Close, HTTP1_PORT),
            Transfer::HttpKeepAlive => http(http::Mode::KeepAlive, HTTP1_PORT),
            Transfer::Http2 => http(http::Mode::H2, H2_PORT),
            Transfer::HttpUdp => Agent::HttpUdp(http_udp::Role::Download {
                server: SocketAddr::from((server, HTTP_UDP_PORT)),
                sizes,
            }),
        }
    }
}
