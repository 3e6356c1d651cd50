//! CoAP with covey's tokio driver. The round trip of the paper (gateway -> server ->
//! caregiver) in three deliveries: `non` (the paper's: NON POSTs relayed as NON POSTs),
//! `con` (CON POSTs relayed as CON POSTs) and `observe` (the gateway POSTs CON, the caregiver
//! observes the server's resource and gets CON notifications). The congestion control is
//! covey's, by name (`default`, `cocoa`, ...). Also an object server for downloads.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use covey::{Client, Code, ContentFormat, Response, Server};
use covey_proto::cc::Algorithm;
use covey_proto::{Config, NotificationType};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::schedule::{report_received, Schedule};
use super::telemetry::AgentEvent;
use super::RunFor;
use crate::EmuError;

/// The path telemetry is posted to and observed at.
pub const TELEMETRY_PATH: &str = "telemetry";

/// How telemetry travels from gateway to caregiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// NON POSTs on both hops (what the paper ran).
    Non,
    /// CON POSTs on both hops.
    Con,
    /// CON POSTs to the server, CON notifications to the observing caregiver.
    Observe,
}

/// What a CoAP agent does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The server: takes the gateway's POSTs and passes them on to the caregiver.
    Relay {
        /// Address to serve on.
        listen: SocketAddr,
        /// The caregiver's server (NON and CON deliveries).
        caregiver: SocketAddr,
        /// How telemetry travels.
        delivery: Delivery,
        /// Congestion control by name.
        cc: String,
        /// How long to run.
        run_for: RunFor,
    },
    /// The patient gateway: POSTs the telemetry to the server.
    Publish {
        /// The server.
        server: SocketAddr,
        /// How telemetry travels.
        delivery: Delivery,
        /// Congestion control by name.
        cc: String,
        /// What to send.
        schedule: Schedule,
    },
    /// The caregiver: serves the relayed POSTs, or observes the server.
    Subscribe {
        /// Address to serve on (NON and CON deliveries).
        listen: SocketAddr,
        /// The server to observe (Observe delivery).
        server: SocketAddr,
        /// How telemetry travels.
        delivery: Delivery,
        /// Congestion control by name.
        cc: String,
        /// How long to run.
        run_for: RunFor,
    },
    /// Serves `/object/<bytes>`: a body of that many bytes.
    ObjectServer {
        /// Address to serve on.
        listen: SocketAddr,
        /// Block size exponent of block-wise responses (size 2^(szx+4)): covey's sockets
        /// do not fragment, so a block must fit the link's MTU.
        block_szx: u8,
        /// How long to run.
        run_for: RunFor,
    },
    /// Downloads each object with a CON GET, one after the other.
    Download {
        /// The object server.
        server: SocketAddr,
        /// Object sizes, in download order.
        sizes: Vec<u64>,
        /// Congestion control by name.
        cc: String,
    },
}

/// The largest object an object server makes: memory stays bounded whatever is asked.
pub const MAX_OBJECT_BYTES: u64 = 64 * 1024;

/// Runs `role` to its end.
pub async fn run(role: Role) -> Result<(), EmuError> {
    match role {
        Role::Relay {
            listen,
            caregiver,
            delivery,
            cc,
            run_for,
        } => run_for.bound(relay(listen, caregiver, delivery, &cc)).await,
        Role::Publish {
            server,
            delivery,
            cc,
            schedule,
        } => publish(server, delivery, &cc, schedule).await,
        Role::Subscribe {
            listen,
            server,
            delivery,
            cc,
            run_for,
        } => {
            run_for
                .bound(subscribe(listen, server, delivery, &cc))
                .await
        }
        Role::ObjectServer {
            listen,
            block_szx,
            run_for,
        } => run_for.bound(object_server(listen, block_szx)).await,
        Role::Download { server, sizes, cc } => download(server, &sizes, &cc).await,
    }
}

/// The lab's configuration (no Echo, as the papers' stacks) with congestion control `cc`.
pub fn config(cc: &str) -> Result<Config, EmuError> {
    let algorithm: Algorithm = cc
        .parse()
        .map_err(|_| EmuError::InvalidOption(format!("unknown congestion control `{cc}`")))?;
    Ok(Config {
        congestion_control: algorithm,
        ..covey_sim::paper_config()
    })
}

/// Requests a NON publisher may have outstanding. RFC 7252 §4.7 counts a NON request as
/// outstanding until its response or its timeout; fire-and-forget telemetry would carry
/// No-Response (RFC 7967), which covey's client does not take yet, so the NON publisher
/// allows this many instead of NSTART 1, as §4.7 lets an application that knows its traffic.
pub const NON_NSTART: usize = 64;

/// The configuration of a telemetry endpoint: `cc`, and [`NON_NSTART`] for NON delivery.
pub fn telemetry_config(cc: &str, delivery: Delivery) -> Result<Config, EmuError> {
    let mut c = config(cc)?;
    if delivery == Delivery::Non {
        c.transmission.nstart = NON_NSTART;
    }
    Ok(c)
}

fn stack_error(e: covey::Error) -> EmuError {
    EmuError::Stack(format!("coap: {e}"))
}

fn client(config: Config) -> Result<Client, EmuError> {
    Client::builder()
        .bind(SocketAddr::from(([0, 0, 0, 0], 0)))
        .config(config)
        .build()
        .map_err(stack_error)
}

fn uri(peer: SocketAddr, path: &str) -> String {
    format!("coap://{peer}/{path}")
}

/// Sends `payload` as a POST, NON or CON, without waiting for the answer.
fn post(client: &Client, peer: SocketAddr, confirmable: bool, payload: Vec<u8>) {
    let request = Client::post(uri(peer, TELEMETRY_PATH))
        .confirmable(confirmable)
        .content_format(ContentFormat::JSON)
        .payload(payload)
        .client(client);
    // The answer (or its absence) is the engine's business; the caregiver's receipt is what
    // the run measures.
    tokio::spawn(async move {
        let _ = request.send().await;
    });
}

async fn relay(
    listen: SocketAddr,
    caregiver: SocketAddr,
    delivery: Delivery,
    cc: &str,
) -> Result<(), EmuError> {
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(64);
    let latest = Arc::new(Mutex::new(Vec::<u8>::new()));
    let on_post = {
        let latest = latest.clone();
        move |request: covey::Request| {
            let tx = tx.clone();
            let latest = latest.clone();
            async move {
                if let Ok(mut l) = latest.lock() {
                    l.clone_from(&request.payload);
                }
                // A full queue drops the message, as a loaded relay would.
                let _ = tx.try_send(request.payload);
                Response::new(Code::CHANGED)
            }
        }
    };
    let on_get = {
        let latest = latest.clone();
        move |_request: covey::Request| {
            let body = latest.lock().map(|l| l.clone()).unwrap_or_default();
            async move { Response::content(ContentFormat::JSON, body) }
        }
    };
    let resource = covey::Resource::new()
        .post(on_post)
        .get(on_get)
        .obs()
        .notifications(NotificationType::Confirmable);
    let server = Server::builder()
        .bind(listen)
        .config(config(cc)?)
        .resource(TELEMETRY_PATH, resource)
        .start()
        .map_err(stack_error)?;
    let forward = client(telemetry_config(cc, delivery)?)?;
    AgentEvent::Ready.emit();
    while let Some(payload) = rx.recv().await {
        match delivery {
            Delivery::Non => post(&forward, caregiver, false, payload),
            Delivery::Con => post(&forward, caregiver, true, payload),
            Delivery::Observe => {
                let _ = server.notify(TELEMETRY_PATH).await;
            }
        }
    }
    Ok(())
}

async fn publish(
    server: SocketAddr,
    delivery: Delivery,
    cc: &str,
    schedule: Schedule,
) -> Result<(), EmuError> {
    let client = client(telemetry_config(cc, delivery)?)?;
    AgentEvent::Ready.emit();
    let confirmable = delivery != Delivery::Non;
    schedule
        .run(|_, payload| {
            post(&client, server, confirmable, payload);
            async {}
        })
        .await;
    // Let the last CONs finish their retransmissions (RFC 7252's MAX_TRANSMIT_WAIT is 93 s;
    // the scenario stops the agent sooner when it has seen enough).
    tokio::time::sleep(Duration::from_secs(if confirmable { 93 } else { 1 })).await;
    Ok(())
}

async fn subscribe(
    listen: SocketAddr,
    server: SocketAddr,
    delivery: Delivery,
    cc: &str,
) -> Result<(), EmuError> {
    if delivery != Delivery::Observe {
        let resource = covey::Resource::new().post(|request: covey::Request| async move {
            report_received(&request.payload);
            Response::new(Code::CHANGED)
        });
        let _server = Server::builder()
            .bind(listen)
            .config(config(cc)?)
            .resource(TELEMETRY_PATH, resource)
            .start()
            .map_err(stack_error)?;
        AgentEvent::Ready.emit();
        std::future::pending::<()>().await;
        return Ok(());
    }
    let client = client(config(cc)?)?;
    let mut announced = false;
    loop {
        // Registration is a CON GET: it survives loss, and is renewed if the stream ends.
        let stream = Client::get(uri(server, TELEMETRY_PATH))
            .client(&client)
            .observe()
            .await;
        let Ok(mut stream) = stream else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        while let Some(Ok(notification)) = stream.next().await {
            if !announced {
                announced = true;
                AgentEvent::Ready.emit();
            }
            report_received(&notification.payload);
        }
    }
}

async fn object_server(listen: SocketAddr, block_szx: u8) -> Result<(), EmuError> {
    let config = Config {
        block_szx,
        ..covey_sim::paper_config()
    };
    // An option out of range is the caller's mistake, not the stack's.
    config
        .validate()
        .map_err(|e| EmuError::InvalidOption(e.to_string()))?;
    let resource = covey::Resource::new().get(|request: covey::Request| async move {
        match request.path_segments().get(1).map(|s| s.parse::<u64>()) {
            Some(Ok(n)) if n <= MAX_OBJECT_BYTES => {
                let body = vec![b'o'; usize::try_from(n).unwrap_or(0)];
                Response::content(ContentFormat::OCTET_STREAM, body)
            }
            _ => Response::error(Code::NOT_FOUND, "no such object"),
        }
    });
    let _server = Server::builder()
        .bind(listen)
        .config(config)
        .subtree("object", resource)
        .start()
        .map_err(stack_error)?;
    AgentEvent::Ready.emit();
    std::future::pending::<()>().await;
    Ok(())
}

async fn download(server: SocketAddr, sizes: &[u64], cc: &str) -> Result<(), EmuError> {
    let client = client(config(cc)?)?;
    AgentEvent::Ready.emit();
    for &bytes in sizes {
        let started = Instant::now();
        let result = Client::get(uri(server, &format!("object/{bytes}")))
            .client(&client)
            .send()
            .await;
        match result {
            Ok(r) if r.payload.len() as u64 == bytes => AgentEvent::Downloaded {
                bytes,
                elapsed_ns: u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX),
            }
            .emit(),
            _ => AgentEvent::Failed { bytes }.emit(),
        }
    }
    Ok(())
}
