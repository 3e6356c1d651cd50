//! Bad input through `covey gateway`: malformed JSON and CBOR, unknown fields, bad URIs,
//! cycles, duplicate names, `ect` at use time, non-numeric members, members that do not
//! answer — each a 4.xx or 5.xx whose diagnostic names the problem (for a JSON request an
//! error report naming the field), and `covey entity` exiting non-zero with one line that
//! names the field.

mod gateway_support;
mod support;

use gateway_support::{covey_run, entity, fails, ok, GatewayProcess, Scratch, SilentMember};
use support::{covey_server, stdout};

#[test]
fn bad_input_is_refused_with_a_diagnostic() {
    let scratch = Scratch::new("bad");
    let (_m1, p1) = covey_server(&[]);
    let (m2, p2) = covey_server(&[]);
    let t1 = format!("coap://127.0.0.1:{p1}/sensors/temp");
    let t2 = format!("coap://127.0.0.1:{p2}/sensors/temp");
    let gw = GatewayProcess::start(
        &scratch.join("e.db"),
        &[
            "--validation-timeout",
            "1",
            "--member-timeout",
            "1",
            "--ack-timeout",
            "0.3",
        ],
    );
    let base = gw.base();
    let e = format!("{base}/e");
    let post = |payload: &[&str]| {
        let mut args = vec!["post"];
        args.extend_from_slice(payload);
        args.push(&e);
        covey_run(&args)
    };

    // Malformed JSON and CBOR.
    let out = post(&["-t", "json", "-e", r#"{"name":"x","er":["#]);
    fails(&out, 3, &["4.00", "malformed JSON"]);
    let cbor = scratch.join("bad.cbor");
    std::fs::write(&cbor, [0xa2, 0x64, b'n', b'a', b'm', b'e']).unwrap();
    let at = format!("@{}", cbor.display());
    let out = post(&["-t", "cbor", "-e", &at]);
    fails(&out, 3, &["4.00", "malformed CBOR"]);
    let out = post(&["-t", "text", "-e", "name=x"]);
    fails(&out, 3, &["4.15"]);
    // Unknown, repeated and mistyped fields: a JSON request gets the error report.
    let out = post(&[
        "-t",
        "json",
        "-e",
        &format!(r#"{{"name":"x","er":["{t1}"],"colour":"red"}}"#),
    ]);
    fails(
        &out,
        3,
        &[
            "4.00",
            r#"{"error":"unknown field \"colour\""#,
            r#""field":"colour","reason":"unknown_field"}"#,
        ],
    );
    let out = post(&[
        "-t",
        "json",
        "-e",
        &format!(r#"{{"name":"x","er":["{t1}"],"enr":"two"}}"#),
    ]);
    fails(&out, 3, &["4.00", r#""field":"enr","reason":"wrong_type""#]);
    let out = post(&["-t", "json", "-e", r#"{"er":[]}"#]);
    fails(&out, 3, &["4.00", "\"er\""]);

    // Bad member URIs, through the friendly command.
    for (uri, why) in [
        ("http://127.0.0.1/x", "coap"),
        ("coap://localhost/x", "IP address"),
        ("coap://[ff1e::89:1]/x", "multicast"),
        ("coap://127.0.0.1:0/x", "cannot be reached"),
        ("coap://[::1/x", "not a valid CoAP URI"),
    ] {
        let out = entity(&["create", &base, "bad", "--member", uri]);
        fails(&out, 3, &["4.00", uri, why, "[field: er, reason: "]);
    }
    let out = entity(&["create", &base, "dup", "--member", &t1, "--member", &t1]);
    fails(
        &out,
        3,
        &["4.00", "listed twice", "[field: er, reason: duplicate]"],
    );
    let out = entity(&["create", &base, "x", "--member", &t1, "--enr", "3"]);
    let line = fails(&out, 3, &["4.00", "field \"enr\""]);
    assert!(
        line.ends_with("[field: enr, reason: out_of_range]\n"),
        "{line}"
    );
    // With --json the report is printed as well.
    let out = entity(&[
        "create", &base, "x", "--member", &t1, "--enr", "3", "--json",
    ]);
    fails(&out, 3, &["[field: enr, reason: out_of_range]"]);
    let report: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(
        (&report["field"], &report["reason"]),
        (
            &serde_json::json!("enr"),
            &serde_json::json!("out_of_range")
        )
    );
    // Values the EM's own rules refuse are caught before anything is sent: exit 2, the
    // option and the EM's diagnostic.
    let out = entity(&["create", &base, "x", "--member", &t1, "--eo", "mean"]);
    fails(&out, 2, &["--eo", "\"mean\" is not an operation"]);
    let out = entity(&["create", &base, "x", "--member", &t1, "--ect", "broadcast"]);
    fails(
        &out,
        2,
        &["--ect", "\"broadcast\" is not unicast or multicast"],
    );
    let out = entity(&["create", &base, "x", "--member", &t1, "--delay", "soon"]);
    fails(&out, 2, &["--delay", "neither a number of milliseconds"]);
    let out = entity(&["create", &base, "x", "--member", &t1, "--enr", "0"]);
    fails(&out, 2, &["--enr", "0 is not a positive number"]);
    // Mistakes caught before anything is sent: exit 2.
    let out = entity(&["create", &base, "bad name", "--member", &t1]);
    fails(&out, 2, &["bad entity name"]);
    let out = entity(&["list", "coap://[::1"]);
    fails(&out, 2, &["bad URI"]);
    let out = entity(&["list", &format!("{base}/somewhere")]);
    fails(&out, 2, &["name the gateway only"]);

    // Duplicate names: 4.00, or 4.12 with If-None-Match.
    ok(&entity(&[
        "create", &base, "room", "--member", &t1, "--member", &t2,
    ]));
    let out = entity(&["create", &base, "room", "--member", &t1]);
    fails(
        &out,
        3,
        &[
            "4.00",
            "an entity named room already exists",
            "[field: name, reason: exists]",
        ],
    );
    let out = entity(&["create", &base, "room", "--member", &t1, "--if-none-match"]);
    fails(&out, 3, &["4.12", "already exists"]);

    // Cycles: an entity in itself, and a loop made by a profile change.
    let own = gw.entity_uri("selfish");
    let out = entity(&["create", &base, "selfish", "--member", &own]);
    fails(&out, 3, &["4.00", "cycle", &own]);
    ok(&entity(&[
        "create",
        &base,
        "outer",
        "--member",
        &gw.entity_uri("room"),
    ]));
    let change = format!(r#"{{"er":["{}"]}}"#, gw.entity_uri("outer"));
    let out = covey_run(&[
        "put",
        "-t",
        "json",
        "-e",
        &change,
        &format!("{}/profile", gw.entity_uri("room")),
    ]);
    fails(&out, 3, &["4.00", "cycle"]);
    let out = entity(&[
        "create",
        &base,
        "ghost",
        "--member",
        &gw.entity_uri("nobody"),
    ]);
    fails(&out, 3, &["4.00", "no entity named nobody"]);

    // ect at use time: 4.02 Bad Option.
    let out = covey_run(&["get", &format!("{}?ect=multicast", gw.entity_uri("room"))]);
    fails(&out, 3, &["4.02", "ect cannot be set per request"]);
    let out = covey_run(&["get", &format!("{}?eo=mean", gw.entity_uri("room"))]);
    fails(&out, 3, &["4.00", "eo=\"mean\""]);
    let out = entity(&["query", &base, "room", "--eo", "avg", "--accept", "link"]);
    fails(&out, 3, &["4.06"]);
    let out = entity(&["query", &base, "room", "--json", "--accept", "cbor"]);
    fails(&out, 2, &["--json prints JSON"]);
    let out = covey_run(&["put", "-e", "x", &gw.entity_uri("room")]);
    fails(&out, 3, &["4.05", "?fanout"]);

    // Non-numeric members: refused at creation for avg, 5.02 at use.
    let time = format!("coap://127.0.0.1:{p1}/time");
    let out = entity(&["create", &base, "clock", "--member", &time, "--eo", "avg"]);
    fails(&out, 3, &["4.00", &time, "not a number"]);
    ok(&entity(&[
        "create", &base, "mixed", "--member", &t1, "--member", &time,
    ]));
    let out = entity(&["query", &base, "mixed", "--eo", "max"]);
    fails(&out, 4, &["5.02", &time, "not a number"]);

    // Members that do not answer: named at creation ...
    let silent = SilentMember::new();
    let quiet = format!("coap://127.0.0.1:{}/s/t", silent.port);
    let out = entity(&[
        "create", &base, "quiet", "--member", &t1, "--member", &quiet,
    ]);
    fails(&out, 3, &["4.00", &quiet, "did not answer"]);
    // ... and at use: 5.04 with the combined reply naming who is missing.
    drop(m2);
    let out = entity(&["query", &base, "room", "--eo", "avg"]);
    let line = fails(&out, 4, &["5.04"]);
    assert!(line.contains("fewer members answered"), "{line}");
    let reply = stdout(&out);
    assert!(reply.contains("answered: 1 of 2"), "{reply}");
    assert!(reply.contains(&format!("missing: {t2}")), "{reply}");
    // enr=1 still answers from the live member.
    let out = ok(&entity(&[
        "query", &base, "room", "--eo", "avg", "--enr", "1",
    ]));
    assert!(out.contains("answered: 1 of 2"), "{out}");
    // An unknown entity and a gateway that is not there.
    let out = entity(&["show", &base, "nothing"]);
    fails(&out, 3, &["4.04", "no entity named nothing"]);
    let out = entity(&[
        "list",
        "-B",
        "0.5",
        &format!("coap://127.0.0.1:{}", silent.port),
    ]);
    fails(&out, 5, &["in time"]);
}
