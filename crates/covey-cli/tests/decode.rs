//! `covey decode` end to end: the built binary on spec vectors, payload formats and bad input.

use std::io::Write;
use std::process::{Command, Stdio};

/// What a run of the binary left behind.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn covey(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_covey"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start covey");
    // The binary may exit before reading stdin; a broken pipe here is fine.
    let _ = child.stdin.take().expect("stdin").write_all(stdin);
    let out = child.wait_with_output().expect("wait for covey");
    Run {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8(out.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("UTF-8 stderr"),
    }
}

fn decode(hex: &str) -> String {
    let run = covey(&["decode", hex], b"");
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.stderr.is_empty());
    run.stdout
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An ACK 2.05 (MID 1, no token) with one Content-Format option and `payload`.
fn response(content_format: u8, payload: &[u8]) -> String {
    format!("60 45 00 01 c1 {content_format:02x} ff {}", hex(payload))
}

fn cbor_text(s: &str) -> Vec<u8> {
    assert!(s.len() < 24);
    let mut out = vec![0x60 | s.len() as u8];
    out.extend_from_slice(s.as_bytes());
    out
}

/// Asserts the one-line error contract: exit 1, nothing on stdout, the message on stderr.
fn assert_fails(run: &Run, expected: &str) {
    assert_eq!(run.code, 1, "stdout: {}", run.stdout);
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, format!("covey: {expected}\n"));
    assert_eq!(run.stderr.lines().count(), 1);
}

fn assert_fails_with(args: &[&str], stdin: &[u8], expected: &str) {
    assert_fails(&covey(args, stdin), expected);
}

#[test]
fn e1_con_get() {
    assert_eq!(
        decode("42 01 7d 34 1a 2b b4 74 65 6d 70"),
        "CON GET  MID 0x7d34 (32052)  token 1a2b\n  Uri-Path: temp\n"
    );
}

#[test]
fn e2_piggybacked_ack() {
    assert_eq!(
        decode("62 45 7d 34 1a 2b c0 ff 32 32 2e 35"),
        "ACK 2.05 Content  MID 0x7d34 (32052)  token 1a2b\n\
         \x20 Content-Format: 0 (text/plain;charset=utf-8)\n\
         payload (4 bytes, text/plain;charset=utf-8):\n\
         22.5\n"
    );
}

#[test]
fn e6_ping_and_reset() {
    assert_eq!(decode("40 00 00 01"), "CON 0.00 Empty  MID 0x0001 (1)\n");
    assert_eq!(decode("70 00 00 01"), "RST 0.00 Empty  MID 0x0001 (1)\n");
}

#[test]
fn every_option_kind() {
    // Uri-Path temp, Uri-Query a=1, Accept 50, Block2 2/1/64, Option 65000 = 0x0102.
    let out = decode("0x42017d34 1a2b b474656d70 43613d31 2132 612a e2fcc40102 ff 32322e35");
    assert_eq!(
        out,
        "CON GET  MID 0x7d34 (32052)  token 1a2b\n\
         \x20 Uri-Path: temp\n\
         \x20 Uri-Query: a=1\n\
         \x20 Accept: 50 (application/json)\n\
         \x20 Block2: 2/1/64\n\
         \x20 Option 65000: 0x0102 (unknown, elective, safe-to-forward)\n\
         payload (4 bytes, no Content-Format, looks like text):\n\
         22.5\n"
    );
    // ETag, If-None-Match, Observe, Max-Age, Size2, No-Response, critical unsafe 2051.
    let out = decode("40 01 00 01 42 de ad 10 11 05 81 3c d2 01 04 00 d1 d9 1a e1 05 f4 07");
    assert_eq!(
        out,
        "CON GET  MID 0x0001 (1)\n\
         \x20 ETag: 0xdead\n\
         \x20 If-None-Match: (empty)\n\
         \x20 Observe: 5\n\
         \x20 Max-Age: 60 s\n\
         \x20 Size2: 1024 bytes\n\
         \x20 No-Response: 26 (suppress 2.xx, 4.xx, 5.xx)\n\
         \x20 Option 2051: 0x07 (unknown, critical, unsafe)\n"
    );
}

#[test]
fn json_payload_is_pretty_printed_in_order() {
    let out = decode(&response(
        50,
        br#"{"temp":22.5,"unit":"Cel","ok":[true,null]}"#,
    ));
    assert!(out.ends_with(
        "payload (43 bytes, application/json):\n\
         {\n  \"temp\": 22.5,\n  \"unit\": \"Cel\",\n  \"ok\": [\n    true,\n    null\n  ]\n}\n"
    ));
}

#[test]
fn senml_json_is_pretty_printed() {
    let out = decode(&response(110, br#"[{"bn":"dev1/","n":"temp","v":20.5}]"#));
    assert!(out
        .contains("payload (36 bytes, application/senml+json):\n[\n  {\n    \"bn\": \"dev1/\",\n"));
}

#[test]
fn cbor_payload_in_diagnostic_notation() {
    // {"temp": 22.5, "id": h'0102', "n": [-3, true, null, 1(1363896240)], "s": "a\"b"}
    let mut cbor = vec![0xa4];
    cbor.extend(cbor_text("temp"));
    cbor.extend([0xf9, 0x4d, 0xa0]); // half-precision 22.5
    cbor.extend(cbor_text("id"));
    cbor.extend([0x42, 0x01, 0x02]);
    cbor.extend(cbor_text("n"));
    cbor.extend([0x84, 0x22, 0xf5, 0xf6, 0xc1, 0x1a, 0x51, 0x4b, 0x67, 0xb0]);
    cbor.extend(cbor_text("s"));
    cbor.extend(cbor_text("a\"b"));
    let out = decode(&response(60, &cbor));
    assert!(
        out.ends_with(&format!(
            "payload ({} bytes, application/cbor):\n\
             {{\"temp\": 22.5, \"id\": h'0102', \"n\": [-3, true, null, 1(1363896240)], \"s\": \"a\\\"b\"}}\n",
            cbor.len()
        )),
        "{out}"
    );
}

#[test]
fn senml_cbor_payload_names_its_labels() {
    // [{-2: "urn:dev:ow:10e2073a0108006:", -3: 1276020076, 0: "voltage", 1: "V", 2: 120.1},
    //  {0: "current", 6: -5, 2: 1.2}]
    let mut cbor = vec![0x82, 0xa5, 0x21, 0x78, 0x1b];
    cbor.extend_from_slice(b"urn:dev:ow:10e2073a0108006:");
    cbor.extend([0x22, 0x1a, 0x4c, 0x0e, 0x85, 0x6c]);
    cbor.push(0x00);
    cbor.extend(cbor_text("voltage"));
    cbor.push(0x01);
    cbor.extend(cbor_text("V"));
    cbor.extend([0x02, 0xfb, 0x40, 0x5e, 0x06, 0x66, 0x66, 0x66, 0x66, 0x66]);
    cbor.push(0xa3);
    cbor.push(0x00);
    cbor.extend(cbor_text("current"));
    cbor.extend([0x06, 0x24]);
    cbor.extend([0x02, 0xfb, 0x3f, 0xf3, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33]);
    let out = decode(&response(112, &cbor));
    assert!(
        out.ends_with(&format!(
            "payload ({} bytes, application/senml+cbor):\n\
             [\n\
             \x20 {{\n\
             \x20   -2 /bn/: \"urn:dev:ow:10e2073a0108006:\",\n\
             \x20   -3 /bt/: 1276020076,\n\
             \x20   0 /n/: \"voltage\",\n\
             \x20   1 /u/: \"V\",\n\
             \x20   2 /v/: 120.1\n\
             \x20 }},\n\
             \x20 {{0 /n/: \"current\", 6 /t/: -5, 2 /v/: 1.2}}\n\
             ]\n",
            cbor.len()
        )),
        "{out}"
    );
    let run = covey(&["decode", "--json", &response(112, &cbor)], b"");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        v["payload"]["cbor_diag"],
        "[{-2: \"urn:dev:ow:10e2073a0108006:\", -3: 1276020076, 0: \"voltage\", 1: \"V\", 2: 120.1}, \
         {0: \"current\", 6: -5, 2: 1.2}]"
    );
}

#[test]
fn link_format_one_link_per_line() {
    let doc = br#"</sensors/temp>;rt="temperature-c";if="sensor,x";ct=0;obs,</sensors/light>;ct=50,</actuators/led>"#;
    let out = decode(&response(40, doc));
    assert!(out.ends_with(
        "application/link-format):\n\
         </sensors/temp>;rt=\"temperature-c\";if=\"sensor,x\";ct=0;obs\n\
         </sensors/light>;ct=50\n\
         </actuators/led>\n"
    ));
}

#[test]
fn binary_payload_as_hex_dump() {
    let payload: Vec<u8> = (0..20).map(|i| i * 13).collect();
    let out = decode(&response(42, &payload));
    assert!(out.ends_with(
        "payload (20 bytes, application/octet-stream):\n\
         0000  00 0d 1a 27 34 41 4e 5b  68 75 82 8f 9c a9 b6 c3  |...'4AN[hu......|\n\
         0010  d0 dd ea f7                                       |....|\n"
    ));
}

#[test]
fn payload_without_content_format_is_sniffed() {
    let out = decode("50 02 00 07 ff 82 01 63 61 62 63");
    assert!(out.ends_with("payload (6 bytes, no Content-Format, looks like CBOR):\n[1, \"abc\"]\n"));
    let out = decode("50 02 00 07 ff ff 00");
    assert!(
        out.contains("payload (2 bytes, no Content-Format, binary):\n0000  ff 00 "),
        "{out}"
    );
}

#[test]
fn json_output_parses_back() {
    let run = covey(
        &[
            "decode",
            "--json",
            "42 01 7d 34 1a 2b b4 74 65 6d 70 43 61 3d 31 21 32 61 2a ff 32 32 2e 35",
        ],
        b"",
    );
    assert_eq!(run.code, 0);
    assert_eq!(run.stdout.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["type"], "CON");
    assert_eq!(v["code"], "0.01");
    assert_eq!(v["code_name"], "GET");
    assert_eq!(v["mid"], 32052);
    assert_eq!(v["token"], "1a2b");
    let options = v["options"].as_array().unwrap();
    assert_eq!(
        options[0],
        serde_json::json!({"number": 11, "name": "Uri-Path", "value": "temp", "raw": "74656d70"})
    );
    assert_eq!(options[1]["value"], "a=1");
    assert_eq!(options[2]["value"], 50);
    assert_eq!(options[2]["media_type"], "application/json");
    assert_eq!(
        options[3]["block"],
        serde_json::json!({"num": 2, "more": true, "size": 64})
    );
    assert_eq!(
        v["payload"],
        serde_json::json!({"content_format": null, "text": "22.5"})
    );

    let run = covey(&["decode", "--json", &response(50, b"{\"a\":1}")], b"");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        v["payload"],
        serde_json::json!({"content_format": 50, "json": {"a": 1}})
    );
    let run = covey(&["decode", "--json", "40 00 00 01"], b"");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["code_name"], "Empty");
    assert_eq!(v["token"], "");
    assert_eq!(v["payload"], serde_json::Value::Null);
}

#[test]
fn stdin_hex_and_binary() {
    let e1 = "CON GET  MID 0x7d34 (32052)  token 1a2b\n  Uri-Path: temp\n";
    let run = covey(&["decode", "-"], b"42 01 7d 34 1a 2b\nb4 74 65 6d 70\n");
    assert_eq!((run.code, run.stdout.as_str()), (0, e1));
    let run = covey(
        &["decode", "-"],
        &[
            0x42, 0x01, 0x7d, 0x34, 0x1a, 0x2b, 0xb4, 0x74, 0x65, 0x6d, 0x70,
        ],
    );
    assert_eq!((run.code, run.stdout.as_str()), (0, e1));
}

#[test]
fn bad_hex() {
    assert_fails_with(
        &["decode", "42 01 7g 34"],
        b"",
        "bad hex at byte 7 of the input: 'g' is not a hex digit",
    );
}

#[test]
fn odd_number_of_hex_digits() {
    assert_fails_with(
        &["decode", "42 01 7d 3"],
        b"",
        "bad hex at byte 9 of the input: odd number of hex digits, '3' has no partner",
    );
    assert_fails_with(
        &["decode", "-"],
        b"4201 7d3\n",
        "bad hex at byte 7 of the input: odd number of hex digits, '3' has no partner",
    );
}

#[test]
fn empty_input() {
    assert_fails_with(&["decode", ""], b"", "empty input: no bytes to decode");
    assert_fails_with(&["decode", "-"], b"", "empty input: no bytes to decode");
    assert_fails_with(&["decode", "-"], b" \n", "empty input: no bytes to decode");
}

#[test]
fn truncated_header() {
    assert_fails_with(
        &["decode", "42 01 7d"],
        b"",
        "bad message at byte 3: message shorter than the 4-byte header",
    );
}

#[test]
fn token_length_9() {
    assert_fails_with(
        &["decode", "49 01 00 01 01 02 03 04 05 06 07 08 09"],
        b"",
        "bad message at byte 0: token length 9 is reserved (must be 0-8)",
    );
}

#[test]
fn payload_marker_without_payload() {
    assert_fails_with(
        &["decode", "42 01 7d 34 1a 2b b4 74 65 6d 70 ff"],
        b"",
        "bad message at byte 11: payload marker 0xFF not followed by a payload",
    );
}

#[test]
fn reserved_length_nibble() {
    assert_fails_with(
        &["decode", "42 01 7d 34 1a 2b bf"],
        b"",
        "bad message at byte 6: option length nibble 15 is reserved",
    );
}

#[test]
fn other_format_errors() {
    assert_fails_with(
        &["decode", "40 20 00 01"],
        b"",
        "bad message at byte 1: code class 1 is reserved",
    );
    assert_fails_with(
        &["decode", "80 01 00 01"],
        b"",
        "bad message at byte 0: version 2 is not CoAP version 1",
    );
    // Binary stdin gets the same treatment.
    assert_fails_with(
        &["decode", "-"],
        &[0x42, 0x01, 0x7d, 0x34, 0x1a],
        "bad message at byte 5: message ends inside the token",
    );
}

#[test]
fn registry_violations_are_errors_too() {
    assert_fails_with(
        &["decode", "40 01 00 01 40"],
        b"",
        "bad message at byte 4: ETag option is 0 bytes long, outside 1-8",
    );
    assert_fails_with(
        &["decode", "40 01 00 01 c0 00"],
        b"",
        "bad message at byte 5: Content-Format option is not repeatable but occurs again",
    );
}

#[test]
fn usage_errors_do_not_decode() {
    let run = covey(&["decode", "--bogus", "42017d34"], b"");
    assert_eq!(run.code, 2);
    assert_eq!(run.stdout, "");
}

#[test]
fn flags_go_before_or_after_the_hex() {
    let before = covey(&["decode", "--json", "42017d341a2bb474656d70"], b"");
    let after = covey(&["decode", "42017d341a2bb474656d70", "--json"], b"");
    assert_eq!(before.code, 0, "{}", before.stderr);
    assert_eq!(after.code, 0, "{}", after.stderr);
    assert_eq!(before.stdout, after.stdout);
    let v: serde_json::Value = serde_json::from_str(&after.stdout).expect("JSON");
    assert_eq!(v["code"], "0.01");
}

#[test]
fn no_argument_reads_standard_input() {
    let e1 = "CON GET  MID 0x7d34 (32052)  token 1a2b\n  Uri-Path: temp\n";
    let run = covey(&["decode"], b"42017d341a2bb474656d70\n");
    assert_eq!((run.code, run.stdout.as_str()), (0, e1), "{}", run.stderr);
    let run = covey(&["decode", "--json"], b"42017d341a2bb474656d70\n");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with('{'), "{}", run.stdout);
    assert_fails_with(&["decode"], b"", "empty input: no bytes to decode");
}

#[test]
fn no_argument_on_a_terminal_is_a_usage_error_not_a_wait() {
    // `script` gives covey a terminal as standard input; it must not sit reading it.
    let line = format!("'{}' decode", env!("CARGO_BIN_EXE_covey"));
    let out = Command::new("timeout")
        .args(["10", "script", "-qefc", &line, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("run script");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("covey: no message: give it as hex"),
        "{shown}"
    );
}
