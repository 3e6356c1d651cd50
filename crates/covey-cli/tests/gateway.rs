//! `covey gateway` and `covey entity` on loopback with `covey serve` members on their own
//! ports: the whole life of a unicast entity with every operation and every Accept (SenML
//! read back with serde_json and ciborium), the generic client commands on the EM, nested
//! entities (room -> floor -> building), and libcoap's client creating, querying and
//! deleting an entity.

mod gateway_support;
mod support;

use gateway_support::{
    apply, close, covey_run, entity, ok, run, senml_cbor, senml_json, GatewayProcess, Scratch,
};
use serde_json::Value;
use support::{covey_server, peer, stdout, Background};

const OPS: [&str; 6] = ["avg", "min", "max", "sum", "count", "median"];

/// `n` members (`covey serve` each) and their temperature URIs.
fn members(n: usize) -> (Vec<Background>, Vec<u16>, Vec<String>) {
    let mut servers = Vec::new();
    let mut ports = Vec::new();
    for _ in 0..n {
        // --plugtest adds /test (GET, PUT, POST, DELETE) for the fan-out checks.
        let (s, port) = covey_server(&["--plugtest"]);
        servers.push(s);
        ports.push(port);
    }
    let uris = ports
        .iter()
        .map(|p| format!("coap://127.0.0.1:{p}/sensors/temp"))
        .collect();
    (servers, ports, uris)
}

fn member_args(uris: &[String]) -> Vec<String> {
    uris.iter()
        .flat_map(|u| ["--member".to_string(), u.clone()])
        .collect()
}

fn create(gw: &GatewayProcess, name: &str, uris: &[String], extra: &[&str]) -> String {
    let base = gw.base();
    let mut args = vec!["create", base.as_str(), name];
    let members = member_args(uris);
    args.extend(members.iter().map(String::as_str));
    args.extend_from_slice(extra);
    ok(&entity(&args))
}

fn query(gw: &GatewayProcess, name: &str, extra: &[&str]) -> std::process::Output {
    let base = gw.base();
    let mut args = vec!["query", base.as_str(), name];
    args.extend_from_slice(extra);
    entity(&args)
}

fn json(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The member values of a JSON (or CBOR-as-JSON) combined reply.
fn reply_values(doc: &Value) -> Vec<f64> {
    doc["replies"]
        .as_array()
        .expect("replies")
        .iter()
        .map(|r| r["value"].as_f64().expect("a numeric member value"))
        .collect()
}

#[test]
fn unicast_entity_life_cycle_with_every_operation_and_format() {
    let scratch = Scratch::new("life");
    let (_servers, _ports, uris) = members(3);
    let gw = GatewayProcess::start(&scratch.join("e.db"), &[]);
    let room = gw.entity_uri("room1");

    // Create (piped: the gateway's text report).
    let out = create(&gw, "room1", &uris, &["--delay", "5"]);
    assert_eq!(
        out,
        format!("created {room} (3 members, unicast)\n"),
        "{}",
        gw.log()
    );
    // The EM's own log lines reach the gateway's log.
    assert!(
        gw.log()
            .contains("created entity room1 (3 members, unicast)"),
        "{}",
        gw.log()
    );
    // Create with --json and use-time defaults in the profile.
    let base = gw.base();
    let mut args = vec!["create", &base, "room2", "--json"];
    let m = member_args(&uris[..2]);
    args.extend(m.iter().map(String::as_str));
    args.extend(["--eo", "max,avg", "--enr", "2", "--emt", "non"]);
    let doc = json(&ok(&entity(&args)));
    assert_eq!(doc["entity"], gw.entity_uri("room2"));
    assert_eq!(
        (doc["ect"].as_str(), doc["members"].as_u64()),
        (Some("unicast"), Some(2))
    );

    // List: raw link format, and JSON.
    let raw = ok(&entity(&["list", &base]));
    assert!(
        raw.contains(r#"</e/room1>;rt="core.entity";ect=unicast"#),
        "{raw}"
    );
    let listed = json(&ok(&entity(&["list", &base, "--json"])));
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["room1", "room2"]);
    assert_eq!(listed[0]["uri"], room);
    assert_eq!(listed[0]["ect"], "unicast");

    // Show: the profile with every effective value.
    let profile = json(&ok(&entity(&["show", &base, "room1"])));
    assert_eq!(profile["name"], "room1");
    assert_eq!(profile["er"], serde_json::json!(uris));
    assert_eq!(
        (profile["emt"].as_str(), profile["ect"].as_str()),
        (Some("con"), Some("unicast"))
    );
    assert_eq!(
        (profile["enr"].as_u64(), profile["delay"].as_u64()),
        (Some(3), Some(5))
    );
    assert_eq!(profile["eo"][0], "lst");
    assert!(profile.get("mcastURI").is_none());
    let profile2 = json(&ok(&entity(&["show", &base, "room2", "--json"])));
    assert_eq!(profile2["eo"], serde_json::json!(["max", "avg"]));
    assert_eq!(
        (profile2["emt"].as_str(), profile2["enr"].as_u64()),
        (Some("non"), Some(2))
    );

    // Every operation in every format.
    for op in OPS {
        // text/plain (no Accept): the number, then who answered.
        let text = ok(&query(&gw, "room1", &["--eo", op]));
        let mut lines = text.lines();
        let value: f64 = lines.next().unwrap().parse().expect("a number");
        if op == "count" {
            assert_eq!(value, 3.0);
        } else if op == "sum" {
            assert!((57.0..75.0).contains(&value), "{op}: {text}");
        } else {
            assert!((19.0..25.0).contains(&value), "{op}: {text}");
        }
        assert_eq!(lines.next(), Some("answered: 3 of 3"), "{text}");

        // application/json: the value is the operation over the values the members gave.
        let doc = json(&ok(&query(&gw, "room1", &["--eo", op, "--json"])));
        assert_eq!(
            (doc["op"].as_str(), doc["entity"].as_str()),
            (Some(op), Some(room.as_str()))
        );
        assert_eq!(
            (doc["answered"].as_u64(), doc["members"].as_u64()),
            (Some(3), Some(3))
        );
        assert_eq!(doc["missing"], serde_json::json!([]));
        let values = reply_values(&doc);
        assert!(
            close(doc["value"].as_f64().unwrap(), apply(op, &values)),
            "{doc}"
        );

        // application/cbor: the same structure, read with ciborium.
        let out = query(&gw, "room1", &["--eo", op, "--accept", "cbor"]);
        let cbor: Value = ciborium::de::from_reader(out.stdout.as_slice()).expect("CBOR");
        assert!(out.status.success());
        assert!(close(
            cbor["value"].as_f64().unwrap(),
            apply(op, &reply_values(&cbor))
        ));

        // SenML JSON and CBOR: the result named after the entity, the count, one record per
        // member, and the result is the operation over those records.
        for format in ["senml+json", "senml+cbor"] {
            let out = query(&gw, "room1", &["--eo", op, "--accept", format]);
            assert!(out.status.success(), "{out:?}");
            let records = if format == "senml+json" {
                senml_json(&out.stdout)
            } else {
                senml_cbor(&out.stdout)
            };
            assert_eq!(records[0].name, room, "{records:?}");
            assert!(
                records[0].base_time.is_some_and(|t| t > 1.6e9),
                "absolute bt"
            );
            assert_eq!(records[1].name, format!("{room}/answered"));
            assert_eq!(records[1].value, Some(3.0));
            let names: Vec<&str> = records[2..].iter().map(|r| r.name.as_str()).collect();
            assert_eq!(names, uris, "{format}");
            let values: Vec<f64> = records[2..].iter().map(|r| r.value.unwrap()).collect();
            assert!(
                close(records[0].value.unwrap(), apply(op, &values)),
                "{op} {format}"
            );
        }
    }

    // lst (the default): one line per member, and one SenML record per member.
    let text = ok(&query(&gw, "room1", &[]));
    for uri in &uris {
        let line = text
            .lines()
            .find(|l| l.starts_with(uri.as_str()))
            .expect(uri);
        let v: f64 = line[uri.len()..].trim().parse().expect("a value");
        assert!((19.0..25.0).contains(&v));
    }
    assert!(text.ends_with("answered: 3 of 3\n"), "{text}");
    for format in ["senml+json", "senml+cbor"] {
        let out = query(&gw, "room1", &["--accept", format]);
        let records = if format == "senml+json" {
            senml_json(&out.stdout)
        } else {
            senml_cbor(&out.stdout)
        };
        assert_eq!(records[0].name, format!("{room}/answered"));
        let names: Vec<&str> = records[1..].iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, uris);
        assert!(records[1..]
            .iter()
            .all(|r| r.time.is_some() && r.value.is_some()));
    }

    // Use-time overrides: anycast (enr=1) answers with the first reply.
    let doc = json(&ok(&query(
        &gw,
        "room1",
        &["--enr", "1", "--eo", "avg", "--emt", "non", "--json"],
    )));
    assert!(doc["answered"].as_u64().unwrap() >= 1, "{doc}");
    let doc = json(&ok(&query(&gw, "room2", &["--json", "--delay", "auto"])));
    assert_eq!(doc["op"], "max", "the first eo is the default");

    // The generic client commands work on the EM too.
    let out = ok(&covey_run(&["get", &format!("{room}?eo=max")]));
    assert!(out.ends_with("answered: 3 of 3\n"), "{out}");
    let body =
        serde_json::json!({"name": "room3", "er": [uris[2].replace("/sensors/temp", "/test")]});
    let out = ok(&covey_run(&[
        "post",
        "-t",
        "json",
        "-e",
        &body.to_string(),
        &format!("{base}/e"),
    ]));
    assert!(out.starts_with("created"), "{out}");
    let wk = ok(&covey_run(&["discover", &base]));
    assert!(wk.contains("</e/room3>"), "{wk}");
    // ... and fan-out of a PUT to every member (actuation).
    let out = ok(&covey_run(&[
        "put",
        "-e",
        "on",
        &format!("{}?fanout", gw.entity_uri("room3")),
    ]));
    assert!(
        out.contains(&format!(
            "{} 2.04",
            uris[2].replace("/sensors/temp", "/test")
        )),
        "{out}"
    );

    // Delete: the entity is gone.
    let out = ok(&entity(&["delete", &base, "room1"]));
    assert_eq!(out, format!("deleted {room}\n"));
    let doc = json(&ok(&entity(&["delete", &base, "room2", "--json"])));
    assert_eq!(doc["entity"], gw.entity_uri("room2"));
    let out = query(&gw, "room1", &[]);
    gateway_support::fails(&out, 3, &["4.04", "no entity named room1"]);
    let listed = json(&ok(&entity(&["list", &base, "--json"])));
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
}

#[test]
fn nested_entities_room_floor_building() {
    let scratch = Scratch::new("nested");
    let (_servers, _ports, uris) = members(5);
    let gw = GatewayProcess::start(&scratch.join("e.db"), &[]);
    let base = gw.base();
    // The cold store: rooms average their sensors, floors list rooms, the building floors.
    let rooms = [
        ("room1", &uris[0..2]),
        ("room2", &uris[2..3]),
        ("room3", &uris[3..5]),
    ];
    for (name, sensors) in rooms {
        create(&gw, name, sensors, &["--eo", "avg"]);
    }
    let floor1 = [gw.entity_uri("room1"), gw.entity_uri("room2")];
    create(&gw, "floor1", &floor1, &[]);
    create(&gw, "floor2", &[gw.entity_uri("room3")], &[]);
    create(
        &gw,
        "building",
        &[gw.entity_uri("floor1"), gw.entity_uri("floor2")],
        &[],
    );

    // A room: the average of its sensors.
    let doc = json(&ok(&query(&gw, "room3", &["--json"])));
    assert!(close(
        doc["value"].as_f64().unwrap(),
        apply("avg", &reply_values(&doc))
    ));

    // The building in SenML: one record per room, through floors and rooms.
    let expected: Vec<String> = ["room1", "room2", "room3"]
        .iter()
        .map(|r| gw.entity_uri(r))
        .collect();
    for format in ["senml+json", "senml+cbor"] {
        let out = query(&gw, "building", &["--accept", format]);
        assert!(out.status.success(), "{out:?}");
        let records = if format == "senml+json" {
            senml_json(&out.stdout)
        } else {
            senml_cbor(&out.stdout)
        };
        assert_eq!(
            records[0].name,
            format!("{}/answered", gw.entity_uri("building"))
        );
        assert_eq!(records[0].value, Some(2.0), "both floors answered");
        let names: Vec<String> = records[1..].iter().map(|r| r.name.clone()).collect();
        assert_eq!(names, expected, "{format}");
        assert!(records[1..]
            .iter()
            .all(|r| r.value.is_some_and(|v| (19.0..25.0).contains(&v))));
    }
    let text = ok(&query(&gw, "building", &[]));
    assert!(
        text.contains(&format!("{} ", gw.entity_uri("room3"))),
        "{text}"
    );
    assert!(text.ends_with("answered: 2 of 2\n"), "{text}");
    let doc = json(&ok(&query(&gw, "building", &["--json"])));
    assert_eq!(doc["replies"][0]["member"], gw.entity_uri("floor1"));
    assert_eq!(doc["replies"][0]["values"].as_array().unwrap().len(), 2);

    // An arithmetic operation over entities that give lists is refused, saying why.
    let out = query(&gw, "building", &["--eo", "avg"]);
    gateway_support::fails(&out, 4, &["5.02", "not a number"]);
    // Entities of rooms can average them.
    create(
        &gw,
        "rooms",
        &[gw.entity_uri("room1"), gw.entity_uri("room3")],
        &["--eo", "avg"],
    );
    let doc = json(&ok(&query(&gw, "rooms", &["--json"])));
    assert!(close(
        doc["value"].as_f64().unwrap(),
        apply("avg", &reply_values(&doc))
    ));
    // Deleting the top of the tree leaves the rest.
    ok(&entity(&["delete", &base, "building"]));
    ok(&entity(&["delete", &base, "floor2"]));
    let listed = json(&ok(&entity(&["list", &base, "--json"])));
    assert_eq!(listed.as_array().unwrap().len(), 5, "{listed}");
}

#[test]
#[ignore = "needs libcoap3-bin"]
fn libcoap_client_creates_queries_and_deletes_an_entity() {
    let scratch = Scratch::new("libcoap");
    let (_servers, _ports, uris) = members(2);
    let gw = GatewayProcess::start(&scratch.join("e.db"), &[]);
    let coap_client = |args: &[&str]| {
        let mut cmd = peer("coap-client-notls", "libcoap3-bin");
        cmd.args(["-B", "20"]).args(args);
        run(cmd)
    };
    let body = serde_json::json!({"name": "lib", "er": uris, "eo": ["avg", "lst"]}).to_string();
    let out = coap_client(&[
        "-m",
        "post",
        "-t",
        "json",
        "-e",
        &body,
        &format!("{}/e", gw.base()),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        stdout(&out).trim(),
        format!("created {} (2 members, unicast)", gw.entity_uri("lib"))
    );
    let out = coap_client(&["-m", "get", &gw.entity_uri("lib")]);
    let text = stdout(&out);
    let value: f64 = text.lines().next().unwrap().parse().expect("the average");
    assert!((19.0..25.0).contains(&value), "{text}");
    assert!(text.contains("answered: 2 of 2"), "{text}");
    // SenML JSON (110) by Accept, and the list by query.
    let out = coap_client(&[
        "-m",
        "get",
        "-A",
        "110",
        &format!("{}?eo=lst", gw.entity_uri("lib")),
    ]);
    let records = senml_json(stdout(&out).trim().as_bytes());
    let names: Vec<&str> = records[1..].iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, uris);
    let out = coap_client(&["-m", "delete", &gw.entity_uri("lib")]);
    assert_eq!(
        stdout(&out).trim(),
        format!("deleted {}", gw.entity_uri("lib"))
    );
    let out = coap_client(&["-m", "get", &format!("{}/e", gw.base())]);
    assert!(!stdout(&out).contains("/e/lib"), "{}", stdout(&out));
}

#[test]
fn the_fan_out_benchmark_runs_and_reports_every_group_size() {
    let out = covey_run(&[
        "entity",
        "bench",
        "--members",
        "2,20",
        "--concurrency",
        "1,2",
        "--seconds",
        "0.3",
        "--warmup",
        "0.1",
        "--json",
    ]);
    let text = ok(&out);
    let runs: Vec<Value> = text.lines().map(json).collect();
    let shape: Vec<(u64, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["members"].as_u64().unwrap(),
                r["concurrency"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(shape, [(2, 1), (2, 2), (20, 1), (20, 2)]);
    for r in &runs {
        assert!(r["queries"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(r["errors"], 0, "{r}");
        assert!(r["p50_ms"].as_f64().unwrap() <= r["p99_ms"].as_f64().unwrap());
    }
    let out = covey_run(&["entity", "bench", "--members", "0"]);
    gateway_support::fails(&out, 2, &["--members"]);
}
