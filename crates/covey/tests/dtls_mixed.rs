//! One driver speaking coap and coaps at once: a server answers both on two sockets, with
//! the identity only over DTLS; a client with both kinds of socket sends `coap://` requests
//! in the clear and `coaps://` ones over DTLS.

use std::net::SocketAddr;

use covey::{Client, Code, Driver, Error, Server};

mod support;

use support::{psk, WhoAmI, LIMIT};

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// A server with one plain and one secured socket on loopback: (server, coap, coaps).
fn mixed_server() -> (Server, SocketAddr, SocketAddr) {
    let server = Server::builder()
        .bind(loopback())
        .bind_secure(loopback())
        .dtls(psk("ward-3:secret"))
        .app(Box::new(WhoAmI))
        .start()
        .unwrap();
    let secured = server.driver().secured_addrs();
    assert_eq!(secured.len(), 1);
    let plain = *server
        .local_addrs()
        .iter()
        .find(|a| !secured.contains(a))
        .unwrap();
    (server, plain, secured[0])
}

async fn whoami(client: &Client, uri: String) -> Result<String, Error> {
    let response = client.request(Code::GET, uri).timeout(LIMIT).await?;
    assert_eq!(response.code, Code::CONTENT);
    Ok(String::from_utf8_lossy(&response.payload).into_owned())
}

#[tokio::test]
async fn one_server_answers_coap_and_coaps_at_once() {
    let (server, plain, secured) = mixed_server();
    let clear = Client::builder().build().unwrap();
    let dtls = Client::builder()
        .dtls(psk("ward-3:secret"))
        .build()
        .unwrap();
    for _ in 0..3 {
        let over_coap = whoami(&clear, format!("coap://{plain}/whoami"));
        let over_coaps = whoami(&dtls, format!("coaps://{secured}/whoami"));
        let (over_coap, over_coaps) = tokio::join!(over_coap, over_coaps);
        assert_eq!(over_coap.unwrap(), "nobody");
        assert_eq!(over_coaps.unwrap(), "psk:ward-3");
    }
    let state = server.driver().dtls_state().await.unwrap().unwrap();
    assert_eq!(state.sessions, 1, "only the coaps client has a session");
}

#[tokio::test]
async fn a_client_with_both_sockets_sends_each_scheme_from_its_own() {
    let (_server, plain, secured) = mixed_server();
    let driver = Driver::builder()
        .bind(loopback())
        .bind_secure(loopback())
        .dtls(psk("ward-3:secret"))
        .spawn()
        .unwrap();
    let client = Client::from_driver(driver);
    for _ in 0..3 {
        let coaps = whoami(&client, format!("coaps://{secured}/whoami")).await;
        assert_eq!(coaps.unwrap(), "psk:ward-3");
        let coap = whoami(&client, format!("coap://{plain}/whoami")).await;
        assert_eq!(coap.unwrap(), "nobody");
    }
}

#[tokio::test]
async fn a_secured_socket_without_credentials_is_refused() {
    let refused = Driver::builder().bind_secure(loopback()).spawn();
    let Err(Error::Dtls(reason)) = refused else {
        panic!("spawned without credentials");
    };
    assert!(reason.contains("credentials"), "{reason}");
}
