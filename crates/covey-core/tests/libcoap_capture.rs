//! Our parser reads libcoap's requests exactly as libcoap's command line asked for them.
//!
//! For each case a UDP socket on 127.0.0.1 (ephemeral port) receives the first datagram that
//! `coap-client-notls` sends, answers it with a response built by `MessageEncoder` (so the
//! client ends at once), and checks that `Message::parse` and `validate_options` accept the
//! request and that its type, code, token, every option (number and decoded value) and payload
//! are what the command line asked for.

mod support;

use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use covey_core::{Code, ContentFormat, Message, MessageEncoder, MessageType, OptionNumber};
use support::{hex, require_tool, TempDir};

/// How long to wait for the client's first datagram.
const CAPTURE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the client may take to exit after our answer before it is killed.
const EXIT_GRACE: Duration = Duration::from_millis(1500);
/// The payload of our answer, which the client prints when it accepts the response.
const ANSWER: &str = "covey-answer";

/// The body `-f` sends: 300 bytes, so a 64-byte block size gives several blocks.
fn file_body() -> Vec<u8> {
    (0..300u32).map(|i| b'a' + (i % 26) as u8).collect()
}

/// An expected option value, decoded with the covey API matching the option's format.
#[derive(Debug, Clone, Copy)]
enum Value {
    /// A string option (Uri-Path, Uri-Query, Uri-Host, Proxy-Uri, ...).
    Str(&'static str),
    /// A uint option.
    Uint(u32),
    /// A uint option holding the listener's UDP port (Uri-Port).
    Port,
    /// Opaque bytes (custom options, If-Match, ETag).
    Bytes(&'static [u8]),
    /// A Block1/Block2 value: NUM, M, SZX.
    Block(u32, bool, u8),
    /// Chosen by libcoap (Request-Tag): any value whose length is in the range.
    AnyOfLen(usize, usize),
}

/// The payload the request must carry.
#[derive(Debug, Clone, Copy)]
enum Body {
    None,
    Text(&'static str),
    Bytes(&'static [u8]),
    /// `len` bytes of [`file_body`] from `offset` (one block of `-f`).
    File {
        offset: usize,
        len: usize,
    },
}

/// The token libcoap must use.
#[derive(Debug, Clone, Copy)]
enum Tok {
    /// Without `-T` libcoap picks the token (a counter or random, by version): 1–8 bytes.
    Chosen,
    /// With `-T base` libcoap 4.3 sends base + 1 (the base is its "initial starting token").
    Exact(&'static [u8]),
}

/// One coap-client invocation and the request it must produce.
struct Case {
    /// Arguments; `{port}` and `{file}` are replaced by the listener's port and the body file.
    args: &'static [&'static str],
    message_type: MessageType,
    code: Code,
    token: Tok,
    /// Every option, in wire order.
    options: &'static [(OptionNumber, Value)],
    payload: Body,
}

use MessageType::{Confirmable as CON, NonConfirmable as NON};
use OptionNumber as O;
use Value::*;

/// The cases. libcoap adds Uri-Port because the listener is not on 5683, and no Uri-Host for an
/// IP literal; `-U` suppresses both.
const CASES: &[Case] = &[
    Case {
        args: &["-m", "get", "coap://127.0.0.1:{port}/a/b?x=1&y=2"],
        message_type: CON,
        code: Code::GET,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("a")),
            (O::URI_PATH, Str("b")),
            (O::URI_QUERY, Str("x=1")),
            (O::URI_QUERY, Str("y=2")),
        ],
        payload: Body::None,
    },
    Case {
        args: &[
            "-A",
            "50",
            "-T",
            "cafe",
            "coap://127.0.0.1:{port}/sensors/temp",
        ],
        message_type: CON,
        code: Code::GET,
        token: Tok::Exact(b"caff"),
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("sensors")),
            (O::URI_PATH, Str("temp")),
            (O::ACCEPT, Uint(50)),
        ],
        payload: Body::None,
    },
    Case {
        args: &[
            "-T",
            "0102030405060708",
            "-A",
            "65000",
            "coap://127.0.0.1:{port}/t",
        ],
        message_type: CON,
        code: Code::GET,
        // Tokens are at most 8 bytes: "01020304" + 1.
        token: Tok::Exact(b"01020305"),
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("t")),
            (O::ACCEPT, Uint(65000)),
        ],
        payload: Body::None,
    },
    Case {
        args: &["-N", "coap://127.0.0.1:{port}/non"],
        message_type: NON,
        code: Code::GET,
        token: Tok::Chosen,
        options: &[(O::URI_PORT, Port), (O::URI_PATH, Str("non"))],
        payload: Body::None,
    },
    Case {
        args: &["-s", "10", "coap://127.0.0.1:{port}/obs"],
        message_type: CON,
        code: Code::GET,
        token: Tok::Chosen,
        options: &[
            (O::OBSERVE, Uint(0)),
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("obs")),
        ],
        payload: Body::None,
    },
    Case {
        args: &["-b", "64", "coap://127.0.0.1:{port}/big"],
        message_type: CON,
        code: Code::GET,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("big")),
            (O::BLOCK2, Block(0, false, 2)),
        ],
        payload: Body::None,
    },
    Case {
        args: &["-b", "2,256", "coap://127.0.0.1:{port}/big"],
        message_type: CON,
        code: Code::GET,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("big")),
            (O::BLOCK2, Block(2, false, 4)),
        ],
        payload: Body::None,
    },
    Case {
        args: &[
            "-m",
            "put",
            "-e",
            "payload",
            "-t",
            "0",
            "coap://127.0.0.1:{port}/p",
        ],
        message_type: CON,
        code: Code::PUT,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("p")),
            (O::CONTENT_FORMAT, Uint(0)),
        ],
        payload: Body::Text("payload"),
    },
    Case {
        // Block1 upload, first block: libcoap adds Size1 and a Request-Tag of its choosing.
        args: &[
            "-m",
            "post",
            "-f",
            "{file}",
            "-b",
            "64",
            "-t",
            "42",
            "coap://127.0.0.1:{port}/up",
        ],
        message_type: CON,
        code: Code::POST,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("up")),
            (O::CONTENT_FORMAT, Uint(42)),
            (O::BLOCK1, Block(0, true, 2)),
            (O::SIZE1, Uint(300)),
            (O::REQUEST_TAG, AnyOfLen(0, 8)),
        ],
        payload: Body::File { offset: 0, len: 64 },
    },
    Case {
        // Starting the upload at block 3.
        args: &[
            "-m",
            "post",
            "-f",
            "{file}",
            "-b",
            "3,64",
            "coap://127.0.0.1:{port}/up",
        ],
        message_type: CON,
        code: Code::POST,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("up")),
            (O::BLOCK1, Block(3, true, 2)),
        ],
        payload: Body::File {
            offset: 192,
            len: 64,
        },
    },
    Case {
        // The whole body fits one 1024-byte block.
        args: &[
            "-m",
            "put",
            "-f",
            "{file}",
            "-b",
            "1024",
            "coap://127.0.0.1:{port}/f",
        ],
        message_type: CON,
        code: Code::PUT,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("f")),
            (O::BLOCK1, Block(0, false, 6)),
        ],
        payload: Body::File {
            offset: 0,
            len: 300,
        },
    },
    Case {
        // Custom options: 2049 needs a 2-byte extended delta, 65000 another from 2049.
        args: &[
            "-O",
            "2049,0x0102",
            "-O",
            "65000,hello",
            "coap://127.0.0.1:{port}/c",
        ],
        message_type: CON,
        code: Code::GET,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("c")),
            (OptionNumber(2049), Bytes(&[0x01, 0x02])),
            (OptionNumber(65000), Bytes(b"hello")),
        ],
        payload: Body::None,
    },
    Case {
        // An unknown option of 280 bytes (2-byte extended length), an empty one, and an
        // unregistered number below 269 (1-byte extended delta).
        args: &[
            "-O",
            "13,0x00",
            "-O",
            "2049,",
            "-O",
            LONG_OPTION_ARG,
            "coap://127.0.0.1:{port}",
        ],
        message_type: CON,
        code: Code::GET,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (OptionNumber(13), Bytes(&[0x00])),
            (OptionNumber(2049), Bytes(&[])),
            (OptionNumber(65000), Str(LONG_OPTION_VALUE)),
        ],
        payload: Body::None,
    },
    Case {
        // Conditional request options.
        args: &[
            "-O",
            "1,0xab",
            "-O",
            "4,0x0102",
            "-O",
            "5",
            "coap://127.0.0.1:{port}/cond",
        ],
        message_type: CON,
        code: Code::GET,
        token: Tok::Chosen,
        options: &[
            (O::IF_MATCH, Bytes(&[0xAB])),
            (O::ETAG, Bytes(&[0x01, 0x02])),
            (O::IF_NONE_MATCH, Bytes(&[])),
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("cond")),
        ],
        payload: Body::None,
    },
    Case {
        args: &["-m", "delete", "coap://127.0.0.1:{port}/d"],
        message_type: CON,
        code: Code::DELETE,
        token: Tok::Chosen,
        options: &[(O::URI_PORT, Port), (O::URI_PATH, Str("d"))],
        payload: Body::None,
    },
    Case {
        args: &[
            "-m",
            "fetch",
            "-t",
            "50",
            "-e",
            "{\"q\":1}",
            "coap://127.0.0.1:{port}/f",
        ],
        message_type: CON,
        code: Code::FETCH,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("f")),
            (O::CONTENT_FORMAT, Uint(50)),
        ],
        payload: Body::Text("{\"q\":1}"),
    },
    Case {
        args: &[
            "-m",
            "patch",
            "-t",
            "60",
            "-e",
            "%A1%01",
            "coap://127.0.0.1:{port}/pa",
        ],
        message_type: CON,
        code: Code::PATCH,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("pa")),
            (O::CONTENT_FORMAT, Uint(60)),
        ],
        payload: Body::Bytes(&[0xA1, 0x01]),
    },
    Case {
        args: &[
            "-m",
            "ipatch",
            "-N",
            "-e",
            "x",
            "coap://127.0.0.1:{port}/ip",
        ],
        message_type: NON,
        code: Code::IPATCH,
        token: Tok::Chosen,
        options: &[(O::URI_PORT, Port), (O::URI_PATH, Str("ip"))],
        payload: Body::Text("x"),
    },
    Case {
        // Percent-encoding is undone in options and in the -e payload.
        args: &[
            "-m",
            "put",
            "-e",
            "caf%C3%A9",
            "coap://127.0.0.1:{port}/a%20b/%C3%A9?q=%26x&e=",
        ],
        message_type: CON,
        code: Code::PUT,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("a b")),
            (O::URI_PATH, Str("é")),
            (O::URI_QUERY, Str("q=&x")),
            (O::URI_QUERY, Str("e=")),
        ],
        payload: Body::Text("café"),
    },
    Case {
        args: &["-U", "coap://127.0.0.1:{port}/u"],
        message_type: CON,
        code: Code::GET,
        token: Tok::Chosen,
        options: &[(O::URI_PATH, Str("u"))],
        payload: Body::None,
    },
    Case {
        // Uri-Host for a name, given explicitly (resolving "localhost" may pick ::1).
        args: &["-O", "3,sensor.example", "coap://127.0.0.1:{port}/x"],
        message_type: CON,
        code: Code::GET,
        token: Tok::Chosen,
        options: &[
            (O::URI_HOST, Str("sensor.example")),
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("x")),
        ],
        payload: Body::None,
    },
    Case {
        args: &["-H", "5", "coap://127.0.0.1:{port}/h"],
        message_type: CON,
        code: Code::GET,
        token: Tok::Chosen,
        options: &[
            (O::URI_PORT, Port),
            (O::URI_PATH, Str("h")),
            (O::HOP_LIMIT, Uint(5)),
        ],
        payload: Body::None,
    },
    Case {
        // Through a proxy: Proxy-Uri replaces the Uri-* options; Hop-Limit defaults to 16.
        args: &[
            "-P",
            "coap://127.0.0.1:{port}",
            "coap://example.com/prox?a=1",
        ],
        message_type: CON,
        code: Code::GET,
        token: Tok::Chosen,
        options: &[
            (O::HOP_LIMIT, Uint(16)),
            (O::PROXY_URI, Str("coap://example.com/prox?a=1")),
        ],
        payload: Body::None,
    },
];

const LONG_OPTION_ARG: &str = concat!(
    "65000,",
    "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz",
    "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz",
    "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz",
    "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghij"
);
const LONG_OPTION_VALUE: &str = concat!(
    "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz",
    "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz",
    "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz",
    "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghij"
);

/// What one run produced: the first datagram and the client's standard output.
struct Capture {
    request: Vec<u8>,
    port: u16,
    stdout: String,
}

/// Runs coap-client with `args` against a fresh listener; answers its first datagram.
fn capture(args: &[&str], file: &str) -> Capture {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("bind listener");
    socket
        .set_read_timeout(Some(CAPTURE_TIMEOUT))
        .expect("read timeout");
    let port = socket.local_addr().expect("local addr").port();
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            a.replace("{port}", &port.to_string())
                .replace("{file}", file)
        })
        .collect();
    let mut child = Command::new("coap-client-notls")
        .args(["-B", "2"])
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start coap-client-notls");

    let mut buf = [0u8; 2048];
    let received = socket.recv_from(&mut buf);
    let (len, peer) = match received {
        Ok(r) => r,
        Err(e) => {
            stop(&mut child);
            panic!("coap-client-notls {args:?} sent nothing within {CAPTURE_TIMEOUT:?}: {e}");
        }
    };
    let request = buf[..len].to_vec();
    if let Some(answer) = answer_to(&request) {
        socket.send_to(&answer, peer).expect("send answer");
    }
    let stdout = stop(&mut child);
    Capture {
        request,
        port,
        stdout,
    }
}

/// Waits briefly for the client to exit, kills it otherwise, and returns its output.
fn stop(child: &mut Child) -> String {
    let deadline = Instant::now() + EXIT_GRACE;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut stdout, &mut out);
    }
    out
}

/// A 2.05 Content echoing the token: piggy-backed in an ACK for a CON, a NON for a NON.
fn answer_to(request: &[u8]) -> Option<Vec<u8>> {
    let req = Message::parse(request).ok()?;
    let (message_type, message_id) = match req.message_type() {
        MessageType::Confirmable => (MessageType::Acknowledgement, req.message_id()),
        _ => (
            MessageType::NonConfirmable,
            req.message_id().wrapping_add(1),
        ),
    };
    let mut buf = [0u8; 64];
    let mut enc = MessageEncoder::new(
        &mut buf,
        message_type,
        Code::CONTENT,
        message_id,
        req.token_bytes(),
    )
    .ok()?;
    enc.uint_option(
        OptionNumber::CONTENT_FORMAT,
        ContentFormat::TEXT_PLAIN.0 as u32,
    )
    .ok()?
    .payload(ANSWER.as_bytes())
    .ok()?;
    let len = enc.finish();
    Some(buf[..len].to_vec())
}

/// Checks the captured request against the case; returns the differences.
fn check(case: &Case, cap: &Capture) -> Vec<String> {
    let mut errors = Vec::new();
    let mut expect = |what: &str, want: String, got: String| {
        if want != got {
            errors.push(format!("{what}: asked for {want}, got {got}"));
        }
    };
    let msg = match Message::parse(&cap.request) {
        Ok(m) => m,
        Err(e) => return vec![format!("parse failed: {e}")],
    };
    if let Err(e) = msg.validate_options() {
        return vec![format!("validate_options failed: {e}")];
    }
    expect(
        "type",
        format!("{:?}", case.message_type),
        format!("{:?}", msg.message_type()),
    );
    expect("code", case.code.to_string(), msg.code().to_string());
    match case.token {
        Tok::Exact(t) => expect("token", hex(t), hex(msg.token_bytes())),
        Tok::Chosen => expect(
            "token length in 1..=8",
            "true".into(),
            (1..=8).contains(&msg.token_bytes().len()).to_string(),
        ),
    }

    let got: Vec<_> = msg.options().collect();
    expect(
        "option numbers",
        format!(
            "{:?}",
            case.options.iter().map(|(n, _)| n.0).collect::<Vec<_>>()
        ),
        format!("{:?}", got.iter().map(|o| o.number.0).collect::<Vec<_>>()),
    );
    for ((number, value), opt) in case.options.iter().zip(&got) {
        let what = format!("option {number}");
        match *value {
            Str(s) => expect(
                &what,
                format!("{:?}", Some(s)),
                format!("{:?}", opt.value_str()),
            ),
            Uint(v) => expect(
                &what,
                format!("{:?}", Some(v)),
                format!("{:?}", opt.value_uint()),
            ),
            Port => expect(
                &what,
                format!("{:?}", Some(cap.port as u32)),
                format!("{:?}", opt.value_uint()),
            ),
            Bytes(b) => expect(&what, hex(b), hex(opt.value)),
            Block(num, more, szx) => expect(
                &what,
                format!("{:?}", Ok::<_, ()>((num, more, szx))),
                format!(
                    "{:?}",
                    covey_core::Block::decode(opt.value).map(|b| (b.num, b.more, b.szx))
                ),
            ),
            AnyOfLen(min, max) => expect(
                &format!("{what} length in {min}..={max}"),
                "true".into(),
                (min..=max).contains(&opt.value.len()).to_string(),
            ),
        }
    }
    check_accessors(case, &msg, &mut expect);

    let body = file_body();
    let payload: &[u8] = match case.payload {
        Body::None => &[],
        Body::Text(t) => t.as_bytes(),
        Body::Bytes(b) => b,
        Body::File { offset, len } => &body[offset..offset + len],
    };
    expect("payload", hex(payload), hex(msg.payload()));
    errors
}

/// The typed accessors of `Message` agree with the option list.
fn check_accessors(case: &Case, msg: &Message<'_>, expect: &mut impl FnMut(&str, String, String)) {
    let strs = |n: OptionNumber| -> Vec<&str> {
        case.options
            .iter()
            .filter_map(|(o, v)| match v {
                Str(s) if *o == n => Some(*s),
                _ => None,
            })
            .collect()
    };
    let uint = |n: OptionNumber| {
        case.options.iter().find_map(|(o, v)| match v {
            Uint(u) if *o == n => Some(*u),
            _ => None,
        })
    };
    let block = |n: OptionNumber| {
        case.options.iter().find_map(|(o, v)| match *v {
            Block(num, more, szx) if *o == n => Some(covey_core::Block { num, more, szx }),
            _ => None,
        })
    };
    let path: Vec<&str> = msg.uri_path().collect();
    let query: Vec<&str> = msg.uri_query().collect();
    expect(
        "uri_path()",
        format!("{:?}", strs(O::URI_PATH)),
        format!("{path:?}"),
    );
    expect(
        "uri_query()",
        format!("{:?}", strs(O::URI_QUERY)),
        format!("{query:?}"),
    );
    let format = |v: Option<u32>| format!("{:?}", v.map(|v| ContentFormat(v as u16)));
    expect(
        "accept()",
        format(uint(O::ACCEPT)),
        format!("{:?}", msg.accept()),
    );
    expect(
        "content_format()",
        format(uint(O::CONTENT_FORMAT)),
        format!("{:?}", msg.content_format()),
    );
    expect(
        "observe()",
        format!("{:?}", uint(O::OBSERVE)),
        format!("{:?}", msg.observe()),
    );
    expect(
        "block1()",
        format!("{:?}", block(O::BLOCK1)),
        format!("{:?}", msg.block1()),
    );
    expect(
        "block2()",
        format!("{:?}", block(O::BLOCK2)),
        format!("{:?}", msg.block2()),
    );
}

#[test]
#[ignore = "needs libcoap3-bin"]
fn libcoap_requests_parse_as_the_command_line_asked() {
    let version = require_tool(
        "coap-client-notls",
        &[],
        "coap-client-notls v",
        "libcoap3-bin",
    );
    let dir = TempDir::new("libcoap");
    let file = dir.path().join("body.txt");
    std::fs::write(&file, file_body()).expect("write body file");
    let file = file.to_str().expect("UTF-8 temp path");

    let mut failures = Vec::new();
    for case in CASES {
        let cap = capture(case.args, file);
        let mut errors = check(case, &cap);
        if answer_to(&cap.request).is_some() && !cap.stdout.contains(ANSWER) {
            errors.push(format!(
                "the client did not print our 2.05 answer (stdout {:?})",
                cap.stdout
            ));
        }
        if !errors.is_empty() {
            failures.push(format!(
                "coap-client-notls {}\n  request {}\n  {}",
                case.args.join(" "),
                hex(&cap.request),
                errors.join("\n  ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{version}: {} of {} cases differ:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}
