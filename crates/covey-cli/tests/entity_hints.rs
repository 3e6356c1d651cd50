//! What `covey entity` and `covey gateway` say to a new user: a host that is no Entity
//! Manager is named as such, and counts of one are singular.

mod gateway_support;
mod support;

use gateway_support::{entity, fails, ok, GatewayProcess, Scratch};
use support::covey_server;

#[test]
fn a_plain_server_is_said_not_to_be_an_entity_manager() {
    let (_server, port) = covey_server(&[]);
    let gateway = format!("coap://127.0.0.1:{port}");
    let out = entity(&["list", &gateway]);
    let err = fails(&out, 3, &["4.04 Not Found"]);
    assert!(
        err.contains(&format!(
            "127.0.0.1:{port} does not look like an Entity Manager"
        )),
        "{err}"
    );
    let out = entity(&["show", &gateway, "room1"]);
    fails(&out, 3, &["does not look like an Entity Manager"]);
}

#[test]
fn an_unknown_entity_on_a_gateway_keeps_the_gateways_diagnostic() {
    let scratch = Scratch::new("hints-unknown");
    let gw = GatewayProcess::start(&scratch.join("e.db"), &[]);
    let out = entity(&["show", &gw.base(), "nope"]);
    let err = fails(&out, 3, &["4.04 Not Found", "no entity named nope"]);
    assert!(!err.contains("Entity Manager"), "{err}");
}

#[test]
fn one_member_and_one_entity_are_singular() {
    let scratch = Scratch::new("hints-plural");
    let db = scratch.join("e.db");
    let (_server, port) = covey_server(&[]);
    let member = format!("coap://127.0.0.1:{port}/sensors/temp");
    let gw = GatewayProcess::start(&db, &["-v"]);
    let out = entity(&["create", &gw.base(), "solo", "--member", &member]);
    assert_eq!(
        ok(&out),
        format!("created {} (1 member, unicast)\n", gw.entity_uri("solo"))
    );
    assert!(gw.log().contains("(0 entities)"), "{}", gw.log());
    let port = gw.port;
    drop(gw);
    let gw = GatewayProcess::start_on(port, &db, &["-v"]).expect("restart the gateway");
    assert!(gw.log().contains("(1 entity)"), "{}", gw.log());
}
