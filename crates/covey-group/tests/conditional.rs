//! Conditional changes of entities (RFC 7252 §5.10.8): a profile's GET gives an ETag that
//! If-Match names, If-None-Match refuses to touch an entity that exists, and If-Match
//! refuses to create one that does not.

mod support;

use covey_core::{Code, ContentFormat};
use covey_proto::Duration;
use support::client::{Answer, Client, Req};
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, sensor_uri, Network};

/// A request with If-Match `tag` (or If-None-Match when `tag` is `None`).
fn conditional(
    net: &mut Network,
    c: &Client,
    method: Code,
    target: &str,
    tag: Option<&[u8]>,
    payload: &[u8],
) -> Answer {
    c.call(
        net,
        em_addr(),
        method,
        Req {
            target,
            content_format: (!payload.is_empty()).then_some(ContentFormat::JSON),
            payload,
            if_match: tag,
            if_none_match: tag.is_none(),
            ..Req::default()
        },
    )
}

#[test]
fn changes_of_an_entity_honour_if_match_and_if_none_match() {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 41);
    sensor(&mut net, 10, 1.0, Format::Text, 1);
    sensor(&mut net, 11, 2.0, Format::Text, 1);
    em::add_in_memory(&mut net, em_config());
    let c = Client::add(&mut net, addr(2), 2);
    let body = format!(r#"{{"name":"room","er":["{}"]}}"#, sensor_uri(10));
    // If-Match cannot create what does not exist.
    let a = conditional(&mut net, &c, Code::POST, "/e", Some(b""), body.as_bytes());
    assert_eq!(a.code, Code::PRECONDITION_FAILED, "{}", a.text());
    assert_eq!(
        c.post_json(&mut net, em_addr(), "/e", &body).code,
        Code::CREATED
    );

    let profile = c.get(&mut net, em_addr(), "/e/room/profile", None);
    let tag = profile.etag.expect("a profile has an ETag");
    let change = format!(r#"{{"er":["{}","{}"]}}"#, sensor_uri(10), sensor_uri(11));
    let target = "/e/room/profile";
    // A stale ETag or If-None-Match changes nothing ...
    let a = conditional(
        &mut net,
        &c,
        Code::PUT,
        target,
        Some(b"old"),
        change.as_bytes(),
    );
    assert_eq!(a.code, Code::PRECONDITION_FAILED, "{}", a.text());
    let a = conditional(&mut net, &c, Code::PUT, target, None, change.as_bytes());
    assert_eq!(a.code, Code::PRECONDITION_FAILED, "{}", a.text());
    assert_eq!(
        c.get(&mut net, em_addr(), target, None).etag,
        Some(tag.clone())
    );
    // ... the current one does, and the ETag moves on.
    let a = conditional(
        &mut net,
        &c,
        Code::PUT,
        target,
        Some(&tag),
        change.as_bytes(),
    );
    assert_eq!(a.code, Code::CHANGED, "{}", a.text());
    let after = c.get(&mut net, em_addr(), target, None);
    assert!(after.text().contains(&sensor_uri(11)), "{}", after.text());
    assert_ne!(after.etag, Some(tag.clone()));
    // /e/room has no lasting ETag: only an empty If-Match matches it.
    let a = conditional(&mut net, &c, Code::DELETE, "/e/room", Some(&tag), b"");
    assert_eq!(a.code, Code::PRECONDITION_FAILED, "{}", a.text());
    let a = conditional(&mut net, &c, Code::DELETE, "/e/room", None, b"");
    assert_eq!(a.code, Code::PRECONDITION_FAILED, "{}", a.text());
    let a = conditional(&mut net, &c, Code::DELETE, "/e/room", Some(b""), b"");
    assert_eq!(a.code, Code::DELETED, "{}", a.text());
}
