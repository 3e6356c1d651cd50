//! Every bad input gets its 4.xx (or 5.xx) and a diagnostic payload naming the problem:
//! text for plain clients, an `ErrorReport` (error, field, reason) in JSON for clients that
//! ask for JSON.

mod support;

use covey_core::{Code, ContentFormat};
use covey_group::{EmConfig, ErrorReport, Reason};
use covey_proto::Duration;
use support::client::{Answer, Client, Req};
use support::em::{self, em_addr, em_config};
use support::member::{sensor, Format};
use support::{addr, Network};

const NUMBER: &str = "coap://[2001:db8::a]/s/t";
const WORD: &str = "coap://[2001:db8::b]/s/t";
const NOBODY: &str = "coap://[2001:db8::99]/s/t";

/// A creation case: name, Content-Format, payload, expected code and diagnostic.
type Case<'a> = (&'a str, Option<ContentFormat>, Vec<u8>, Code, &'a str);

fn setup() -> (Network, Client) {
    let mut net = Network::new(Duration::from_millis(10), 0.0, 9);
    sensor(&mut net, 10, 21.0, Format::Text, 1);
    sensor(&mut net, 11, 0.0, Format::Word("open"), 1);
    em::add_in_memory(
        &mut net,
        EmConfig {
            validation_timeout: Duration::from_secs(5),
            ..em_config()
        },
    );
    let c = Client::add(&mut net, addr(2), 2);
    (net, c)
}

fn post(
    net: &mut Network,
    c: &Client,
    cf: Option<ContentFormat>,
    payload: &[u8],
    if_none_match: bool,
) -> (Code, String) {
    let a = c.call(
        net,
        em_addr(),
        Code::POST,
        Req {
            target: "/e",
            content_format: cf,
            payload,
            if_none_match,
            ..Req::default()
        },
    );
    (a.code, diagnostic(&a, cf == Some(ContentFormat::JSON)))
}

/// The diagnostic of an answer: a JSON client's must be an `ErrorReport` (its `error` text
/// is returned), any other client's is text.
fn diagnostic(a: &Answer, json_client: bool) -> String {
    if a.code.is_success() {
        return a.text();
    }
    match ErrorReport::from_response(a.content_format, &a.payload) {
        Some(report) => {
            assert!(
                json_client,
                "an error report to a plain client: {}",
                a.text()
            );
            report.error
        }
        None => {
            assert!(
                !json_client,
                "a JSON client got no error report: {}",
                a.text()
            );
            assert_eq!(a.content_format, None, "{}", a.text());
            a.text()
        }
    }
}

fn check(case: &str, got: (Code, String), code: Code, diagnostic: &str) {
    assert_eq!(got.0, code, "{case}: {}", got.1);
    assert!(
        got.1.contains(diagnostic),
        "{case}: diagnostic {:?} lacks {diagnostic:?}",
        got.1
    );
}

#[test]
fn creation_refusals() {
    let (mut net, c) = setup();
    let json = Some(ContentFormat::JSON);
    let silent = format!("member {NOBODY} did not answer");
    let words =
        format!("member {WORD} replied \"open\", which is not a number, but eo includes avg");
    let cases: Vec<Case<'_>> = vec![
        (
            "malformed JSON",
            json,
            br#"{"name":"a","er":["#.to_vec(),
            Code::BAD_REQUEST,
            "malformed JSON",
        ),
        (
            "malformed CBOR",
            Some(ContentFormat::CBOR),
            vec![0xa2, 0x64, b'n'],
            Code::BAD_REQUEST,
            "malformed CBOR",
        ),
        (
            "not an object",
            json,
            b"[1,2]".to_vec(),
            Code::BAD_REQUEST,
            "must be an object",
        ),
        (
            "unknown field",
            json,
            format!(r#"{{"name":"a","er":["{NUMBER}"],"colour":"red"}}"#).into_bytes(),
            Code::BAD_REQUEST,
            "unknown field \"colour\"",
        ),
        (
            "field twice",
            json,
            format!(r#"{{"name":"a","er":["{NUMBER}"],"enr":1,"enr":1}}"#).into_bytes(),
            Code::BAD_REQUEST,
            "field \"enr\" is given twice",
        ),
        (
            "wrong type",
            json,
            br#"{"name":"a","er":"coap://[::1]/s"}"#.to_vec(),
            Code::BAD_REQUEST,
            "field \"er\" must be an array of coap:// URIs, not a string",
        ),
        (
            "bad URI",
            json,
            br#"{"name":"a","er":["http://[::1]/s"]}"#.to_vec(),
            Code::BAD_REQUEST,
            "member \"http://[::1]/s\": not a valid CoAP URI",
        ),
        (
            "host name",
            json,
            br#"{"name":"a","er":["coap://sensor.example/s"]}"#.to_vec(),
            Code::BAD_REQUEST,
            "the host must be an IP address",
        ),
        (
            "coaps member, no credentials",
            json,
            format!(r#"{{"name":"a","er":["{NUMBER}","coaps://[2001:db8::a]/s/t"]}}"#).into_bytes(),
            Code::BAD_REQUEST,
            "member \"coaps://[2001:db8::a]/s/t\": this EM has no DTLS credentials",
        ),
        (
            "coaps member of a multicast entity",
            json,
            br#"{"name":"a","er":["coaps://[2001:db8::a]/s/t"],"ect":"multicast"}"#.to_vec(),
            Code::BAD_REQUEST,
            "a multicast entity's members must be coap://",
        ),
        (
            "duplicate member",
            json,
            format!(r#"{{"name":"a","er":["{NUMBER}","coap://[2001:db8::a]:5683/s/t"]}}"#)
                .into_bytes(),
            Code::BAD_REQUEST,
            "is listed twice",
        ),
        (
            "enr too large",
            json,
            format!(r#"{{"name":"a","er":["{NUMBER}"],"enr":2}}"#).into_bytes(),
            Code::BAD_REQUEST,
            "field \"enr\": 2 replies cannot come from 1 member",
        ),
        (
            "multicast con",
            json,
            format!(r#"{{"name":"a","er":["{NUMBER}"],"ect":"multicast","emt":"con"}}"#)
                .into_bytes(),
            Code::BAD_REQUEST,
            "uses NON requests",
        ),
        (
            "bad name",
            json,
            format!(r#"{{"name":"a/b","er":["{NUMBER}"]}}"#).into_bytes(),
            Code::BAD_REQUEST,
            "field \"name\": \"a/b\" holds '/'",
        ),
        (
            "self cycle",
            json,
            br#"{"name":"loop","er":["coap://[2001:db8::1]/e/loop"]}"#.to_vec(),
            Code::BAD_REQUEST,
            "cycle: entity loop cannot be a member of itself",
        ),
        (
            "silent member",
            json,
            format!(r#"{{"name":"a","er":["{NUMBER}","{NOBODY}"]}}"#).into_bytes(),
            Code::BAD_REQUEST,
            &silent,
        ),
        (
            "member 4.04",
            json,
            br#"{"name":"a","er":["coap://[2001:db8::a]/s/x"]}"#.to_vec(),
            Code::BAD_REQUEST,
            "member coap://[2001:db8::a]/s/x answered 4.04 Not Found",
        ),
        (
            "avg of words",
            json,
            format!(r#"{{"name":"a","er":["{NUMBER}","{WORD}"],"eo":["lst","avg"]}}"#).into_bytes(),
            Code::BAD_REQUEST,
            &words,
        ),
        (
            "text payload",
            Some(ContentFormat::TEXT_PLAIN),
            b"name=a".to_vec(),
            Code::UNSUPPORTED_CONTENT_FORMAT,
            "application/json (50) or application/cbor (60)",
        ),
    ];
    for (case, cf, payload, code, diagnostic) in cases {
        check(
            case,
            post(&mut net, &c, cf, &payload, false),
            code,
            diagnostic,
        );
    }
    let start = net.now;
    check(
        "silent member takes the validation timeout",
        post(
            &mut net,
            &c,
            json,
            format!(r#"{{"name":"s","er":["{NOBODY}"]}}"#).as_bytes(),
            false,
        ),
        Code::BAD_REQUEST,
        "no answer within 5 s",
    );
    assert!(net.now - start >= Duration::from_secs(5));
    // Nothing was created by any of these.
    assert_eq!(c.get(&mut net, em_addr(), "/e", None).text(), "");

    // Duplicate names: 4.00, or 4.12 when the client asked with If-None-Match.
    let ok = format!(r#"{{"name":"a","er":["{NUMBER}","{WORD}"]}}"#);
    assert_eq!(
        post(&mut net, &c, json, ok.as_bytes(), false).0,
        Code::CREATED
    );
    check(
        "duplicate name",
        post(&mut net, &c, json, ok.as_bytes(), false),
        Code::BAD_REQUEST,
        "an entity named a already exists",
    );
    check(
        "duplicate name, If-None-Match",
        post(&mut net, &c, json, ok.as_bytes(), true),
        Code::PRECONDITION_FAILED,
        "entity a already exists (If-None-Match)",
    );
}

#[test]
fn use_time_refusals() {
    let (mut net, c) = setup();
    let body = format!(r#"{{"name":"a","er":["{NUMBER}","{WORD}"],"eo":["lst","count"]}}"#);
    assert_eq!(
        c.post_json(&mut net, em_addr(), "/e", &body).code,
        Code::CREATED
    );
    let get = |net: &mut Network, target: &str, accept: Option<ContentFormat>| {
        let a = c.get(net, em_addr(), target, accept);
        (a.code, diagnostic(&a, accept == Some(ContentFormat::JSON)))
    };
    check(
        "ect at use time",
        get(&mut net, "/e/a?ect=multicast", None),
        Code::BAD_OPTION,
        "ect cannot be set per request",
    );
    check(
        "unknown entity",
        get(&mut net, "/e/zz", None),
        Code::NOT_FOUND,
        "no entity named zz",
    );
    check(
        "unknown profile",
        get(&mut net, "/e/zz/profile", None),
        Code::NOT_FOUND,
        "no entity named zz",
    );
    check(
        "unknown path",
        get(&mut net, "/x/y", None),
        Code::NOT_FOUND,
        "no resource at /x/y",
    );
    check(
        "bad accept",
        get(&mut net, "/e/a", Some(ContentFormat::XML)),
        Code::NOT_ACCEPTABLE,
        "cannot answer in application/xml",
    );
    check(
        "bad accept for the list",
        get(&mut net, "/e", Some(ContentFormat::JSON)),
        Code::NOT_ACCEPTABLE,
        "application/link-format (40)",
    );
    check(
        "bad accept for a profile",
        get(&mut net, "/e/a/profile", Some(ContentFormat::SENML_JSON)),
        Code::NOT_ACCEPTABLE,
        "application/json (50) or application/cbor (60)",
    );
    check(
        "enr too large",
        get(&mut net, "/e/a?enr=3", None),
        Code::BAD_REQUEST,
        "enr=3: entity a has only 2 members",
    );
    check(
        "eo not offered",
        get(&mut net, "/e/a?eo=avg", None),
        Code::BAD_REQUEST,
        "eo=avg: entity a offers lst, count only",
    );
    check(
        "unknown parameter",
        get(&mut net, "/e/a?colour=red", None),
        Code::BAD_REQUEST,
        "unknown query parameter \"colour\"",
    );
    check(
        "bad delay",
        get(&mut net, "/e/a?delay=soon", None),
        Code::BAD_REQUEST,
        "delay=\"soon\"",
    );
    check(
        "fanout on GET",
        get(&mut net, "/e/a?fanout", None),
        Code::BAD_REQUEST,
        "?fanout is for PUT, POST and DELETE",
    );
    check(
        "bad filter",
        get(&mut net, "/e?=x", None),
        Code::BAD_REQUEST,
        "query filter",
    );

    let call = |net: &mut Network, method: Code, target: &str, payload: &[u8]| {
        let a = c.call(
            net,
            em_addr(),
            method,
            Req {
                target,
                content_format: Some(ContentFormat::JSON),
                payload,
                ..Req::default()
            },
        );
        (a.code, diagnostic(&a, true))
    };
    check(
        "PUT without fanout",
        call(&mut net, Code::PUT, "/e/a", b"1"),
        Code::METHOD_NOT_ALLOWED,
        "needs ?fanout",
    );
    check(
        "POST to a profile",
        call(&mut net, Code::POST, "/e/a/profile", b"{}"),
        Code::METHOD_NOT_ALLOWED,
        "use GET, PUT",
    );
    check(
        "ect change",
        call(
            &mut net,
            Code::PUT,
            "/e/a/profile",
            br#"{"ect":"multicast"}"#,
        ),
        Code::BAD_REQUEST,
        "field \"ect\": is set at creation only",
    );
    check(
        "rename",
        call(&mut net, Code::PUT, "/e/a/profile", br#"{"name":"b"}"#),
        Code::BAD_REQUEST,
        "an entity cannot be renamed",
    );
    check(
        "profile unknown field",
        call(&mut net, Code::PUT, "/e/a/profile", br#"{"colour":1}"#),
        Code::BAD_REQUEST,
        "unknown field \"colour\"",
    );
    check(
        "profile enr",
        call(&mut net, Code::PUT, "/e/a/profile", br#"{"enr":9}"#),
        Code::BAD_REQUEST,
        "field \"enr\": 9 replies cannot come from 2 members",
    );
    check(
        "profile avg of words",
        call(&mut net, Code::PUT, "/e/a/profile", br#"{"eo":["avg"]}"#),
        Code::BAD_REQUEST,
        "replied \"open\", which is not a number",
    );
    check(
        "delete unknown",
        call(&mut net, Code::DELETE, "/e/zz", b""),
        Code::NOT_FOUND,
        "no entity named zz",
    );
    // Still there, unchanged.
    let profile = c.get(&mut net, em_addr(), "/e/a/profile", None).json();
    assert_eq!(profile["eo"], serde_json::json!(["lst", "count"]));
}

/// A refusal as a JSON client gets it: code, Content-Format and report.
fn refusal(
    net: &mut Network,
    c: &Client,
    method: Code,
    target: &str,
    accept: Option<ContentFormat>,
    cf: Option<ContentFormat>,
    payload: &[u8],
) -> (Code, Option<ContentFormat>, Vec<u8>) {
    let a = c.call(
        net,
        em_addr(),
        method,
        Req {
            target,
            accept,
            content_format: cf,
            payload,
            ..Req::default()
        },
    );
    (a.code, a.content_format, a.payload)
}

#[test]
fn json_clients_get_the_field_and_reason_as_data() {
    let (mut net, c) = setup();
    let json = Some(ContentFormat::JSON);
    let post = |net: &mut Network, body: String| {
        refusal(net, &c, Code::POST, "/e", None, json, body.as_bytes())
    };
    let report = |(code, cf, payload): (Code, Option<ContentFormat>, Vec<u8>)| {
        assert_eq!(cf, json, "{}", String::from_utf8_lossy(&payload));
        let r = ErrorReport::from_response(cf, &payload).expect("an error report");
        (code, r.field.clone(), r.reason, r.error)
    };
    let cases = [
        (
            format!(r#"{{"name":"a","er":["{NUMBER}"],"enr":"2"}}"#),
            Some("enr"),
            Reason::WrongType,
            "field \"enr\" must be a positive integer",
        ),
        (
            format!(r#"{{"name":"a","er":["{NUMBER}"],"enr":2}}"#),
            Some("enr"),
            Reason::OutOfRange,
            "entity a not created: field \"enr\": 2 replies cannot come from 1 member",
        ),
        (
            format!(r#"{{"name":"a","er":["{NUMBER}"],"delay":70000}}"#),
            Some("delay"),
            Reason::OutOfRange,
            "70000 is not a delay",
        ),
        (
            format!(r#"{{"name":"a","er":["{NUMBER}"],"colour":"red"}}"#),
            Some("colour"),
            Reason::UnknownField,
            "unknown field \"colour\"",
        ),
        (
            r#"{"name":"a","er":["http://[::1]/s"]}"#.to_string(),
            Some("er"),
            Reason::NotAUri,
            "member \"http://[::1]/s\": not a valid CoAP URI",
        ),
        (
            format!(r#"{{"name":"a","er":["{NUMBER}","{NUMBER}"]}}"#),
            Some("er"),
            Reason::Duplicate,
            "is listed twice",
        ),
        (
            r#"{"name":".hidden","er":["coap://[::1]/s"]}"#.to_string(),
            Some("name"),
            Reason::ReservedName,
            "may not start with '.'",
        ),
        (
            format!(r#"{{"name":"a","er":["{NUMBER}","{NOBODY}"]}}"#),
            Some("er"),
            Reason::NoAnswer,
            "did not answer",
        ),
        (
            format!(r#"{{"name":"a","er":["{NUMBER}","{WORD}"],"eo":["avg"]}}"#),
            Some("er"),
            Reason::NotANumber,
            "which is not a number",
        ),
        (
            r#"{"name":"a","er":["coap://[::1]/s"],"oscore":{"coap://[::1]/s":{"secret_hex":"zz"}}}"#
                .to_string(),
            Some("oscore"),
            Reason::WrongType,
            "coap://[::1]/s: \"secret_hex\" is not a hex string",
        ),
        (
            r#"{"name":"a","er":["coap://[::1]/s"],"oscore":{"coap://[::2]/s":{}}}"#.to_string(),
            Some("oscore"),
            Reason::Missing,
            "has no \"secret_hex\"",
        ),
        (
            r#"{"name":"a","#.to_string(),
            None,
            Reason::Malformed,
            "malformed JSON",
        ),
    ];
    for (body, field, reason, text) in cases {
        let (code, f, r, error) = report(post(&mut net, body.clone()));
        assert_eq!(code, Code::BAD_REQUEST, "{body}: {error}");
        assert_eq!((f.as_deref(), r), (field, reason), "{body}: {error}");
        assert!(error.contains(text), "{body}: {error:?} lacks {text:?}");
    }
    // The report is one JSON object with exactly these members, `field` null when none.
    let (_, _, payload) = post(&mut net, "[1]".into());
    let doc: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(
        doc,
        serde_json::json!({
            "error": "the profile must be an object with the fields name, er, emt, ect, enr, eo, delay, oscore (got an array)",
            "field": null,
            "reason": "not_an_object",
        })
    );

    // A name taken, and a profile change: the same form.
    let ok = format!(r#"{{"name":"a","er":["{NUMBER}","{WORD}"]}}"#);
    assert_eq!(post(&mut net, ok.clone()).0, Code::CREATED);
    let (code, f, r, _) = report(post(&mut net, ok.clone()));
    assert_eq!(
        (code, f.as_deref(), r),
        (Code::BAD_REQUEST, Some("name"), Reason::Exists)
    );
    let put = refusal(
        &mut net,
        &c,
        Code::PUT,
        "/e/a/profile",
        None,
        json,
        br#"{"ect":"multicast"}"#,
    );
    let (code, f, r, error) = report(put);
    assert_eq!(
        (code, f.as_deref(), r),
        (Code::BAD_REQUEST, Some("ect"), Reason::Immutable)
    );
    assert!(
        error.starts_with("profile of a not changed: field \"ect\""),
        "{error}"
    );
    // Other refusals too, with the reason of their code and no field.
    let (code, f, r, error) = report(refusal(&mut net, &c, Code::GET, "/e/zz", json, None, b""));
    assert_eq!((code, f, r), (Code::NOT_FOUND, None, Reason::NotFound));
    assert_eq!(error, "no entity named zz");

    // Plain clients keep the text diagnostic: no Accept and a CBOR or unlabelled payload,
    // or Accept text/plain with a JSON payload.
    let bad = format!(r#"{{"name":"b","er":["{NUMBER}"],"enr":2}}"#);
    let cbor = {
        let v: serde_json::Value = serde_json::from_str(&bad).unwrap();
        let mut out = Vec::new();
        ciborium::ser::into_writer(&v, &mut out).unwrap();
        out
    };
    for (accept, cf, payload) in [
        (None, None, bad.as_bytes().to_vec()),
        (None, Some(ContentFormat::CBOR), cbor.clone()),
        (
            Some(ContentFormat::TEXT_PLAIN),
            json,
            bad.as_bytes().to_vec(),
        ),
    ] {
        let (code, got_cf, payload) = refusal(&mut net, &c, Code::POST, "/e", accept, cf, &payload);
        assert_eq!(
            (code, got_cf),
            (Code::BAD_REQUEST, None),
            "{accept:?} {cf:?}"
        );
        assert_eq!(
            String::from_utf8(payload).unwrap(),
            "entity b not created: field \"enr\": 2 replies cannot come from 1 member"
        );
    }
    // Accept application/json asks for the report whatever the payload is in.
    let (code, f, r, _) = report(refusal(
        &mut net,
        &c,
        Code::POST,
        "/e",
        json,
        Some(ContentFormat::CBOR),
        &cbor,
    ));
    assert_eq!(
        (code, f.as_deref(), r),
        (Code::BAD_REQUEST, Some("enr"), Reason::OutOfRange)
    );
}
