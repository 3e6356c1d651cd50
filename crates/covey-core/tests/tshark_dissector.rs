//! Wireshark's CoAP dissector reads every message `MessageEncoder` writes as we meant it.
//!
//! A few hundred messages (every type, every named code, tokens of 0–8 bytes, sample values of
//! every option in the registry, unknown options that need extended deltas and lengths, payloads
//! of many sizes) go into a classic pcap file of raw IPv4/UDP packets to port 5683. `tshark -T
//! pdml` dissects it, and for every packet the header, each option (number, length, raw bytes,
//! and the decoded value tshark shows) and the payload must equal what we encoded, with no
//! malformed packet and no expert info except the few listed where tshark 4.0 lags the registries.

mod support;

use std::collections::HashMap;
use std::process::Command;

use covey_core::content_format::CONTENT_FORMATS;
use covey_core::option_registry::OPTION_REGISTRY;
use covey_core::{
    Block, Code, ContentFormat, Message, MessageEncoder, MessageType, OptionFormat, OptionNumber,
};
use support::{hex, require_tool, TempDir};

// ---------------------------------------------------------------------------------------------
// The messages
// ---------------------------------------------------------------------------------------------

/// One message to encode; options may be listed in any order (they are sorted stably).
#[derive(Debug, Clone)]
struct Spec {
    message_type: MessageType,
    code: Code,
    token: Vec<u8>,
    options: Vec<(OptionNumber, Vec<u8>)>,
    payload: Vec<u8>,
}

impl Spec {
    fn new(message_type: MessageType, code: Code, token: &[u8]) -> Spec {
        Spec {
            message_type,
            code,
            token: token.to_vec(),
            options: Vec::new(),
            payload: Vec::new(),
        }
    }

    fn opt(mut self, number: OptionNumber, value: &[u8]) -> Spec {
        self.options.push((number, value.to_vec()));
        self
    }

    fn uint(self, number: OptionNumber, value: u32) -> Spec {
        self.opt(number, &uint_bytes(value))
    }

    fn text(self, number: OptionNumber, value: &str) -> Spec {
        self.opt(number, value.as_bytes())
    }

    fn payload(mut self, payload: &[u8]) -> Spec {
        self.payload = payload.to_vec();
        self
    }
}

const TYPES: [MessageType; 4] = [
    MessageType::Confirmable,
    MessageType::NonConfirmable,
    MessageType::Acknowledgement,
    MessageType::Reset,
];

/// Every named constant of `Code` (checked against `Code::name` below).
const CODES: &[Code] = &[
    Code::EMPTY,
    Code::GET,
    Code::POST,
    Code::PUT,
    Code::DELETE,
    Code::FETCH,
    Code::PATCH,
    Code::IPATCH,
    Code::CREATED,
    Code::DELETED,
    Code::VALID,
    Code::CHANGED,
    Code::CONTENT,
    Code::CONTINUE,
    Code::BAD_REQUEST,
    Code::UNAUTHORIZED,
    Code::BAD_OPTION,
    Code::FORBIDDEN,
    Code::NOT_FOUND,
    Code::METHOD_NOT_ALLOWED,
    Code::NOT_ACCEPTABLE,
    Code::REQUEST_ENTITY_INCOMPLETE,
    Code::CONFLICT,
    Code::PRECONDITION_FAILED,
    Code::REQUEST_ENTITY_TOO_LARGE,
    Code::UNSUPPORTED_CONTENT_FORMAT,
    Code::UNPROCESSABLE_ENTITY,
    Code::TOO_MANY_REQUESTS,
    Code::INTERNAL_SERVER_ERROR,
    Code::NOT_IMPLEMENTED,
    Code::BAD_GATEWAY,
    Code::SERVICE_UNAVAILABLE,
    Code::GATEWAY_TIMEOUT,
    Code::PROXYING_NOT_SUPPORTED,
    Code::HOP_LIMIT_REACHED,
];

/// Unregistered option numbers: 2049 needs a 2-byte extended delta from 0, 65000 from 2049.
const UNKNOWN_OPTIONS: [u16; 2] = [2049, 65000];

/// Value lengths that sit on both sides of every delta/length nibble boundary.
const SAMPLE_LENGTHS: [usize; 10] = [0, 1, 8, 12, 13, 40, 255, 268, 269, 1034];

/// Uint sample values: 0 to 4 bytes on the wire.
const SAMPLE_UINTS: [u32; 8] = [0, 1, 0xFF, 0x100, 0xFFFF, 0x1_0000, 0xFF_FFFF, u32::MAX];

fn uint_bytes(value: u32) -> Vec<u8> {
    let mut tmp = [0; 4];
    covey_core::uint::encode(value, &mut tmp).to_vec()
}

fn block_bytes(num: u32, more: bool, szx: u8) -> Vec<u8> {
    let mut tmp = [0; 4];
    Block::new(num, more, szx)
        .expect("valid block")
        .encode(&mut tmp)
        .to_vec()
}

/// Printable ASCII of `len` bytes (URI-unreserved characters, so any string option takes it).
fn text_of_len(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789-._~";
    (0..len)
        .map(|i| ALPHABET[(i * 7 + len) % ALPHABET.len()] as char)
        .collect()
}

fn bytes_of_len(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 37 + 11) as u8).collect()
}

/// Sample values for one registry option: every legal length class for its format.
fn sample_values(
    number: OptionNumber,
    format: OptionFormat,
    min: usize,
    max: usize,
) -> Vec<Vec<u8>> {
    let fits = |len: usize| (min..=max).contains(&len);
    match number {
        OptionNumber::BLOCK1
        | OptionNumber::BLOCK2
        | OptionNumber::Q_BLOCK1
        | OptionNumber::Q_BLOCK2 => vec![
            block_bytes(0, false, 0),
            block_bytes(0, true, 6),
            block_bytes(3, true, 2),
            block_bytes(20, false, 6),
            block_bytes(Block::MAX_NUM, true, 5),
        ],
        OptionNumber::CONTENT_FORMAT | OptionNumber::ACCEPT => CONTENT_FORMATS
            .iter()
            .map(|(cf, _)| cf.0 as u32)
            .chain([9999, 65535])
            .map(uint_bytes)
            .collect(),
        // Flags byte (RFC 8613 §6.1): Partial IV length n, k = Key ID present, h = context.
        OptionNumber::OSCORE => vec![
            vec![],
            vec![0x09, 0x14],
            vec![0x0A, 0x01, 0x02, 0x07],
            vec![0x19, 0x05, 0x02, 0xAA, 0xBB, 0x01, 0x02],
            vec![0x1D, 1, 2, 3, 4, 5, 0x01, 0xCC, 0x42],
        ],
        OptionNumber::OBSERVE => [0, 1, 0xFF, 0x100, 0xFF_FFFF].map(uint_bytes).to_vec(),
        OptionNumber::HOP_LIMIT => [1, 16, 255].map(uint_bytes).to_vec(),
        _ => match format {
            OptionFormat::Empty => vec![vec![]],
            OptionFormat::Uint => SAMPLE_UINTS
                .iter()
                .map(|&v| uint_bytes(v))
                .filter(|b| fits(b.len()))
                .collect(),
            OptionFormat::String => SAMPLE_LENGTHS
                .iter()
                .filter(|&&l| fits(l))
                .map(|&l| text_of_len(l).into_bytes())
                .collect(),
            OptionFormat::Opaque => (min..=max.min(8))
                .chain(SAMPLE_LENGTHS.iter().copied().filter(|&l| l > 8 && fits(l)))
                .map(bytes_of_len)
                .collect(),
        },
    }
}

/// The message set: header sweep, one message per option sample, realistic combinations,
/// and payloads of many sizes.
fn messages() -> Vec<Spec> {
    let mut specs = Vec::new();

    // Every type with every named code, cycling the token length through 0..=8.
    for (i, &code) in CODES.iter().enumerate() {
        for (j, &ty) in TYPES.iter().enumerate() {
            let token: Vec<u8> = if code.is_empty() {
                vec![]
            } else {
                (0..(i + j) % 9)
                    .map(|k| (i * 16 + j * 4 + k) as u8)
                    .collect()
            };
            specs.push(Spec::new(ty, code, &token));
        }
    }

    // Every registry option alone, with each of its sample values.
    for def in OPTION_REGISTRY {
        let values = sample_values(
            def.number,
            def.format,
            def.min_len as usize,
            def.max_len as usize,
        );
        for (k, value) in values.iter().enumerate() {
            let token = [def.number.0 as u8, k as u8];
            specs.push(
                Spec::new(MessageType::Confirmable, Code::GET, &token).opt(def.number, value),
            );
        }
    }

    // Unknown options, alone and together, with lengths across the extended-length forms.
    for (k, &len) in [0usize, 1, 12, 13, 268, 269, 1000].iter().enumerate() {
        for &n in &UNKNOWN_OPTIONS {
            let spec = Spec::new(MessageType::NonConfirmable, Code::POST, &[k as u8]);
            specs.push(spec.opt(OptionNumber(n), &bytes_of_len(len)));
        }
        let both = Spec::new(MessageType::Confirmable, Code::PUT, &[k as u8, 1])
            .opt(OptionNumber(2049), &bytes_of_len(len))
            .opt(OptionNumber(65000), &bytes_of_len(len / 2));
        specs.push(both);
    }

    specs.extend(combinations());

    // Payloads: sizes around the boundaries, with and without a Content-Format.
    for (k, &len) in [1usize, 12, 13, 100, 268, 269, 512, 1024]
        .iter()
        .enumerate()
    {
        let body = text_of_len(len).into_bytes();
        let token = [0xB0, k as u8, 0x5A];
        specs.push(Spec::new(MessageType::Acknowledgement, Code::CONTENT, &token).payload(&body));
        specs.push(
            Spec::new(MessageType::Confirmable, Code::PUT, &token)
                .text(OptionNumber::URI_PATH, "data")
                .uint(OptionNumber::CONTENT_FORMAT, 0)
                .payload(&body),
        );
        specs.push(
            Spec::new(MessageType::NonConfirmable, Code::CONTENT, &token)
                .uint(OptionNumber::CONTENT_FORMAT, 42)
                .payload(&bytes_of_len(len)),
        );
    }
    specs
}

/// Realistic messages with many options each, so deltas between options (and delta 0 for
/// repeated options) are exercised, not only deltas from zero.
fn combinations() -> Vec<Spec> {
    use OptionNumber as O;
    let con = MessageType::Confirmable;
    let non = MessageType::NonConfirmable;
    let ack = MessageType::Acknowledgement;
    let mut all = vec![
        // GET coap://sensor.example:5684/a/b/temp?x=1&y=2, Observe, early Block2 negotiation.
        Spec::new(con, Code::GET, &[0xCA, 0xFE])
            .text(O::URI_HOST, "sensor.example")
            .uint(O::OBSERVE, 0)
            .uint(O::URI_PORT, 5684)
            .text(O::URI_PATH, "a")
            .text(O::URI_PATH, "b")
            .text(O::URI_PATH, "temp")
            .text(O::URI_QUERY, "x=1")
            .text(O::URI_QUERY, "y=2")
            .uint(O::ACCEPT, 50)
            .opt(O::BLOCK2, &block_bytes(0, false, 2)),
        // A notification carrying the second 256-byte block of a larger representation.
        Spec::new(non, Code::CONTENT, &[0xCA, 0xFE])
            .opt(O::ETAG, &[1, 2, 3, 4])
            .uint(O::OBSERVE, 0x1234)
            .uint(O::CONTENT_FORMAT, 60)
            .uint(O::MAX_AGE, 30)
            .opt(O::BLOCK2, &block_bytes(1, true, 4))
            .uint(O::SIZE2, 5000)
            .payload(&bytes_of_len(256)),
        // Block1 upload with Size1, Request-Tag and an Echo.
        Spec::new(con, Code::POST, &[9, 8, 7, 6, 5, 4, 3, 2])
            .text(O::URI_PATH, "upload")
            .uint(O::CONTENT_FORMAT, 42)
            .opt(O::BLOCK1, &block_bytes(2, true, 6))
            .uint(O::SIZE1, 70000)
            .opt(O::ECHO, &bytes_of_len(40))
            .opt(O::REQUEST_TAG, &[0x77, 0x66])
            .payload(&bytes_of_len(1024)),
        // Conditional PUT.
        Spec::new(con, Code::PUT, &[1])
            .opt(O::IF_MATCH, &[0xAB, 0xCD])
            .opt(O::IF_MATCH, &[])
            .opt(O::IF_NONE_MATCH, &[])
            .text(O::URI_PATH, "")
            .text(O::URI_PATH, "config")
            .uint(O::CONTENT_FORMAT, 0)
            .payload(b"on"),
        // 2.01 Created with a location.
        Spec::new(ack, Code::CREATED, &[2, 2])
            .text(O::LOCATION_PATH, "things")
            .text(O::LOCATION_PATH, "42")
            .text(O::LOCATION_QUERY, "rev=7"),
        // Through a proxy, with Hop-Limit, No-Response and unknown options.
        Spec::new(non, Code::FETCH, &[3, 3, 3])
            .uint(O::HOP_LIMIT, 8)
            .text(O::PROXY_URI, "coap://origin.example/r?q=1")
            .uint(O::NO_RESPONSE, 26)
            .opt(OptionNumber(2049), &[0x01, 0x02])
            .opt(OptionNumber(65000), b"elective")
            .uint(O::CONTENT_FORMAT, 50)
            .payload(b"{\"q\":1}"),
        // 4.13 with Size1, 5.03 with Max-Age.
        Spec::new(ack, Code::REQUEST_ENTITY_TOO_LARGE, &[4]).uint(O::SIZE1, 1024),
        Spec::new(ack, Code::SERVICE_UNAVAILABLE, &[5]).uint(O::MAX_AGE, 120),
        // OSCORE-protected request (outer options only).
        Spec::new(con, Code::POST, &[6, 6])
            .text(O::URI_HOST, "h")
            .opt(O::OSCORE, &[0x09, 0x14, 0x01])
            .opt(O::Q_BLOCK1, &block_bytes(1, false, 1))
            .opt(O::Q_BLOCK2, &block_bytes(0, true, 3))
            .text(O::PROXY_SCHEME, "coap"),
    ];
    // Every registry option at once, each with its first non-empty sample, plus the unknowns.
    let mut kitchen_sink = Spec::new(con, Code::IPATCH, &[0xFF; 8]);
    for def in OPTION_REGISTRY {
        let values = sample_values(def.number, def.format, def.min_len as usize, 40);
        let value = values.iter().find(|v| !v.is_empty()).unwrap_or(&values[0]);
        kitchen_sink = kitchen_sink.opt(def.number, value);
    }
    for n in UNKNOWN_OPTIONS {
        kitchen_sink = kitchen_sink.opt(OptionNumber(n), b"u");
    }
    all.push(kitchen_sink);
    all
}

/// Our own parser must read back exactly the spec, so tshark is compared with what was asked.
fn assert_round_trip(spec: &Spec, message_id: u16, datagram: &[u8]) {
    let msg = Message::parse(datagram).expect("our own message parses");
    msg.validate_options().expect("our own message validates");
    let mut options = spec.options.clone();
    options.sort_by_key(|(n, _)| *n);
    let parsed: Vec<(OptionNumber, Vec<u8>)> = msg
        .options()
        .map(|o| (o.number, o.value.to_vec()))
        .collect();
    assert_eq!(
        (
            msg.message_type(),
            msg.code(),
            msg.message_id(),
            msg.token_bytes(),
            msg.payload()
        ),
        (
            spec.message_type,
            spec.code,
            message_id,
            &spec.token[..],
            &spec.payload[..]
        ),
        "header or payload of {spec:?}"
    );
    assert_eq!(parsed, options, "options of {spec:?}");
}

fn encode(spec: &Spec, message_id: u16) -> Vec<u8> {
    let mut options = spec.options.clone();
    options.sort_by_key(|(n, _)| *n);
    let mut buf = [0u8; 2048];
    let mut enc = MessageEncoder::new(
        &mut buf,
        spec.message_type,
        spec.code,
        message_id,
        &spec.token,
    )
    .expect("header");
    for (n, v) in &options {
        enc.option(*n, v).expect("option");
    }
    enc.payload(&spec.payload).expect("payload");
    let len = enc.finish();
    buf[..len].to_vec()
}

// ---------------------------------------------------------------------------------------------
// The capture file
// ---------------------------------------------------------------------------------------------

/// Classic pcap, LINKTYPE_RAW (101): each record is an IPv4 packet.
const LINKTYPE_RAW: u32 = 101;
/// IPv4 header (20) plus UDP header (8): where the CoAP message starts in each frame.
const COAP_OFFSET: usize = 28;

fn pcap(datagrams: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(0xA1B2_C3D4u32.to_le_bytes());
    out.extend(2u16.to_le_bytes());
    out.extend(4u16.to_le_bytes());
    out.extend(0i32.to_le_bytes()); // thiszone
    out.extend(0u32.to_le_bytes()); // sigfigs
    out.extend(65535u32.to_le_bytes()); // snaplen
    out.extend(LINKTYPE_RAW.to_le_bytes());
    for (i, d) in datagrams.iter().enumerate() {
        let packet = ipv4_udp(d, 49152 + (i % 1000) as u16, 5683);
        out.extend((i as u32).to_le_bytes()); // ts_sec: one packet a second
        out.extend(0u32.to_le_bytes()); // ts_usec
        out.extend((packet.len() as u32).to_le_bytes());
        out.extend((packet.len() as u32).to_le_bytes());
        out.extend(packet);
    }
    out
}

/// 127.0.0.1 -> 127.0.0.1 IPv4/UDP packet; UDP checksum 0 (none), which IPv4 allows.
fn ipv4_udp(payload: &[u8], src_port: u16, dst_port: u16) -> Vec<u8> {
    let total = (COAP_OFFSET + payload.len()) as u16;
    let mut ip = vec![
        0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1,
    ];
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    let sum = ip
        .chunks(2)
        .map(|w| u16::from_be_bytes([w[0], w[1]]) as u32)
        .sum::<u32>();
    let folded = (sum & 0xFFFF) + (sum >> 16);
    let checksum = !((folded & 0xFFFF) + (folded >> 16)) as u16;
    ip[10..12].copy_from_slice(&checksum.to_be_bytes());
    ip.extend(src_port.to_be_bytes());
    ip.extend(dst_port.to_be_bytes());
    ip.extend((8 + payload.len() as u16).to_be_bytes());
    ip.extend([0, 0]);
    ip.extend(payload);
    ip
}

// ---------------------------------------------------------------------------------------------
// tshark's PDML output
// ---------------------------------------------------------------------------------------------

/// One `<packet>`, `<proto>` or `<field>` element of PDML.
#[derive(Debug, Default)]
struct Node {
    name: String,
    show: String,
    showname: String,
    /// Hex of the bytes the field covers (absent for zero-length fields).
    value: Option<String>,
    pos: usize,
    size: usize,
    children: Vec<Node>,
}

impl Node {
    fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }

    fn children_named<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'s Node> + 's {
        self.children.iter().filter(move |c| c.name == name)
    }

    fn descendants<'s>(&'s self, out: &mut Vec<&'s Node>) {
        for c in &self.children {
            out.push(c);
            c.descendants(out);
        }
    }

    fn show_of(&self, name: &str) -> Option<&str> {
        self.child(name).map(|c| c.show.as_str())
    }

    fn raw(&self) -> &str {
        self.value.as_deref().unwrap_or("")
    }
}

/// Parses tshark's PDML, which writes one element per line, into one tree per packet.
fn parse_pdml(text: &str) -> Vec<Node> {
    let mut packets = Vec::new();
    let mut stack: Vec<Node> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line == "<packet>" {
            stack.push(Node::default());
        } else if line.starts_with("<proto ") || line.starts_with("<field ") {
            let node = element(line);
            if line.ends_with("/>") {
                stack
                    .last_mut()
                    .expect("element outside a packet")
                    .children
                    .push(node);
            } else {
                stack.push(node);
            }
        } else if matches!(line, "</proto>" | "</field>" | "</packet>") {
            let node = stack.pop().expect("unbalanced PDML");
            match stack.last_mut() {
                Some(parent) => parent.children.push(node),
                None => packets.push(node),
            }
        }
    }
    packets
}

fn element(line: &str) -> Node {
    let attrs = attributes(line);
    let get = |k: &str| attrs.get(k).cloned().unwrap_or_default();
    Node {
        name: get("name"),
        show: get("show"),
        showname: get("showname"),
        value: attrs.get("value").cloned(),
        pos: get("pos").parse().unwrap_or(0),
        size: get("size").parse().unwrap_or(0),
        children: Vec::new(),
    }
}

fn attributes(line: &str) -> HashMap<String, String> {
    let mut attrs = HashMap::new();
    let mut rest = line;
    while let Some(eq) = rest.find("=\"") {
        let key = rest[..eq]
            .rsplit(' ')
            .next()
            .unwrap_or_default()
            .to_string();
        let after = &rest[eq + 2..];
        let end = after.find('"').unwrap_or(after.len());
        attrs.insert(key, unescape(&after[..end]));
        rest = &after[(end + 1).min(after.len())..];
    }
    attrs
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

// ---------------------------------------------------------------------------------------------
// What tshark should show
// ---------------------------------------------------------------------------------------------

/// One value field tshark adds under an option, and what it must hold.
#[derive(Debug, PartialEq, Eq)]
enum Expect {
    /// The field's `show` text.
    Show(String),
    /// The bytes the field covers (its `value` hex).
    Raw(Vec<u8>),
}

fn show(field: &'static str, text: impl ToString) -> (&'static str, Expect) {
    (field, Expect::Show(text.to_string()))
}

fn raw(field: &'static str, bytes: &[u8]) -> (&'static str, Expect) {
    (field, Expect::Raw(bytes.to_vec()))
}

/// The value fields tshark 4.0's CoAP dissector adds for an option, in order.
fn tshark_view(number: OptionNumber, value: &[u8]) -> Vec<(&'static str, Expect)> {
    use OptionNumber as O;
    let uint = || covey_core::uint::decode(value).expect("uint sample");
    let text = || String::from_utf8(value.to_vec()).expect("ASCII sample");
    match number {
        O::IF_MATCH => vec![raw("coap.opt.if_match", value)],
        O::ETAG => vec![raw("coap.opt.etag", value)],
        O::IF_NONE_MATCH => vec![],
        O::URI_HOST => vec![show("coap.opt.uri_host", text())],
        O::LOCATION_PATH => vec![show("coap.opt.location_path", text())],
        O::URI_PATH => vec![show("coap.opt.uri_path", text())],
        O::URI_QUERY => vec![show("coap.opt.uri_query", text())],
        O::LOCATION_QUERY => vec![show("coap.opt.location_query", text())],
        O::PROXY_URI => vec![show("coap.opt.proxy_uri", text())],
        O::PROXY_SCHEME => vec![show("coap.opt.proxy_scheme", text())],
        O::OBSERVE => vec![show("coap.opt.observe", uint())],
        O::URI_PORT => vec![show("coap.opt.uri_port", uint())],
        O::MAX_AGE => vec![show("coap.opt.max_age", uint())],
        O::HOP_LIMIT => vec![show("coap.opt.hop_limit", uint())],
        O::SIZE1 => vec![show("coap.opt.size1", uint())],
        // tshark 4.0 dissects Size2 as if it were a block option's SZX field only.
        O::SIZE2 => vec![show("coap.opt.block_size", uint() & 0x7)],
        O::CONTENT_FORMAT => vec![show("coap.opt.ctype", tshark_format_name(uint()))],
        // tshark 4.0 shows an empty (0, text/plain) Accept as "(null)".
        O::ACCEPT if value.is_empty() => vec![show("coap.opt.accept", "(null)")],
        O::ACCEPT => vec![show("coap.opt.accept", tshark_format_name(uint()))],
        O::BLOCK1 | O::BLOCK2 => {
            let b = Block::decode(value).expect("block sample");
            vec![
                show("coap.opt.block_number", b.num),
                show("coap.opt.block_mflag", b.more as u8),
                show("coap.opt.block_size", b.szx),
            ]
        }
        O::OSCORE => oscore_view(value),
        _ => vec![raw("coap.opt.unknown", value)],
    }
}

/// How tshark names a Content-Format: our media type (spaces aside) or `Unknown Type N`.
fn tshark_format_name(number: u32) -> String {
    let cf = ContentFormat(u16::try_from(number).expect("16-bit format"));
    match cf.media_type() {
        Some(m) if !TSHARK_MISSING_FORMATS.contains(&cf.0) => m.to_string(),
        _ => format!("Unknown Type {number}"),
    }
}

/// Content-Formats our registry names that tshark 4.0's table lacks.
const TSHARK_MISSING_FORMATS: &[u16] = &[16, 17, 18, 63, 11050, 11060];

/// The OSCORE option fields (RFC 8613 §6.1): flags, Partial IV, Key ID Context, Key ID.
fn oscore_view(value: &[u8]) -> Vec<(&'static str, Expect)> {
    let Some(&flags) = value.first() else {
        return vec![];
    };
    let n = (flags & 0x07) as usize;
    let k = flags & 0x08 != 0;
    let h = flags & 0x10 != 0;
    let mut fields = vec![
        show("coap.opt.object_security_reserved", (flags >> 5 != 0) as u8),
        show("coap.opt.object_security_kid_context_present", h as u8),
        show("coap.opt.object_security_kid_present", k as u8),
        show("coap.opt.object_security_piv_len", n),
    ];
    let mut rest = &value[1..];
    if n > 0 {
        fields.push(raw("coap.opt.object_security_piv", &rest[..n]));
        rest = &rest[n..];
    }
    if h {
        let s = rest[0] as usize;
        fields.push(show("coap.opt.object_security_kid_context_len", s));
        fields.push(raw("coap.opt.object_security_kid_context", &rest[1..1 + s]));
        rest = &rest[1 + s..];
    }
    if k {
        fields.push(raw("coap.opt.object_security_kid", rest));
    }
    fields
}

/// Registered options tshark 4.0 does not know: it flags them "Invalid Option Number" in its
/// Malformed expert group (a warning) and shows the value as `coap.opt.unknown`.
const TSHARK_UNKNOWN_REGISTERED: &[OptionNumber] = &[
    OptionNumber::Q_BLOCK1,
    OptionNumber::EDHOC,
    OptionNumber::Q_BLOCK2,
    OptionNumber::ECHO,
    OptionNumber::NO_RESPONSE,
    OptionNumber::REQUEST_TAG,
];

/// The expert info tshark attaches to an option, if any.
fn expected_expert(number: OptionNumber, len: usize) -> Option<String> {
    if TSHARK_UNKNOWN_REGISTERED.contains(&number) {
        Some(format!("Invalid Option Number {}", number.0))
    } else if !number.is_known() {
        Some(format!("Unknown Option Number {}", number.0))
    } else if number == OptionNumber::URI_QUERY && len == 0 {
        // tshark's table says 1–255; RFC 7252 §5.10 allows an empty Uri-Query.
        Some("Invalid Option Range: 0 (1 < x < 255)".to_string())
    } else {
        None
    }
}

/// Expert messages in tshark's Malformed group (they add a `_ws.malformed` marker).
fn is_malformed_group(message: &str) -> bool {
    message.starts_with("Invalid Option Number") || message.starts_with("Invalid Option Range")
}

/// Option fields that describe the header rather than the value.
const OPTION_HEADER_FIELDS: &[&str] = &[
    "coap.opt.desc",
    "coap.opt.delta",
    "coap.opt.delta_ext",
    "coap.opt.length",
    "coap.opt.length_ext",
    "_ws.expert",
    "_ws.malformed",
];

// ---------------------------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------------------------

/// Decodes a nibble plus its extension as tshark shows them.
fn extended(nibble: &str, ext: Option<&str>) -> usize {
    let nibble: usize = nibble.parse().expect("nibble");
    let ext: usize = ext.map_or(0, |e| e.parse().expect("extension"));
    match nibble {
        13 => ext + 13,
        14 => ext + 269,
        n => n,
    }
}

/// Compares one packet; returns the differences found.
fn compare(index: usize, datagram: &[u8], packet: &Node) -> Vec<String> {
    let mut errors = Vec::new();
    let mut check = |what: &str, ours: String, theirs: String| {
        if ours != theirs {
            errors.push(format!(
                "packet {}: {what}: we encoded {ours:?}, tshark shows {theirs:?}",
                index + 1
            ));
        }
    };
    let msg = Message::parse(datagram).expect("checked by assert_round_trip");
    let Some(coap) = packet.children.iter().find(|p| p.name == "coap") else {
        return vec![format!("packet {}: tshark found no CoAP layer", index + 1)];
    };
    let field = |name: &str| coap.show_of(name).unwrap_or("<absent>").to_string();

    check("length", datagram.len().to_string(), coap.size.to_string());
    check(
        "type",
        (msg.message_type() as u8).to_string(),
        field("coap.type"),
    );
    check("code", msg.code().0.to_string(), field("coap.code"));
    check(
        "message ID",
        msg.message_id().to_string(),
        field("coap.mid"),
    );
    check(
        "token length",
        msg.token_bytes().len().to_string(),
        field("coap.token_len"),
    );
    let token = coap.child("coap.token").map(|t| t.raw().to_string());
    let ours = (!msg.token_bytes().is_empty()).then(|| hex(msg.token_bytes()));
    check("token", format!("{ours:?}"), format!("{token:?}"));
    if let Some(code_name) = tshark_code_name(coap) {
        check("code name", our_code_name(msg.code()), code_name);
    }

    // Options, in wire order, each against tshark's option subtree.
    let theirs: Vec<&Node> = coap.children_named("coap.opt.name").collect();
    check(
        "option count",
        msg.options().count().to_string(),
        theirs.len().to_string(),
    );
    let mut start = msg.options_offset();
    let mut previous = 0u16;
    let mut expected_experts = Vec::new();
    for (k, (opt, node)) in msg.options().zip(&theirs).enumerate() {
        let what = |s: &str| format!("option #{} ({}) {s}", k + 1, opt.number);
        let value_start = opt.value.as_ptr() as usize - datagram.as_ptr() as usize;
        let end = value_start + opt.value.len();
        check(
            &what("bytes"),
            hex(&datagram[start..end]),
            node.raw().to_string(),
        );
        check(
            &what("position"),
            (COAP_OFFSET + start).to_string(),
            node.pos.to_string(),
        );
        let index = format!("#{}: ", k + 1);
        check(
            &what("index"),
            index.clone(),
            node.show.get(..index.len()).unwrap_or_default().to_string(),
        );
        let desc = node.show_of("coap.opt.desc").unwrap_or_default();
        check(&what("number"), opt.number.0.to_string(), desc_number(desc));
        let delta = extended(
            node.show_of("coap.opt.delta").unwrap_or("99"),
            node.show_of("coap.opt.delta_ext"),
        );
        check(
            &what("delta"),
            (opt.number.0 - previous).to_string(),
            delta.to_string(),
        );
        let len = extended(
            node.show_of("coap.opt.length").unwrap_or("99"),
            node.show_of("coap.opt.length_ext"),
        );
        check(
            &what("length"),
            opt.value.len().to_string(),
            len.to_string(),
        );

        let expected = tshark_view(opt.number, opt.value);
        let actual: Vec<&Node> = node
            .children
            .iter()
            .filter(|c| !OPTION_HEADER_FIELDS.contains(&c.name.as_str()))
            .collect();
        check(
            &what("value fields"),
            format!("{:?}", expected.iter().map(|(f, _)| *f).collect::<Vec<_>>()),
            format!(
                "{:?}",
                actual.iter().map(|c| c.name.as_str()).collect::<Vec<_>>()
            ),
        );
        for ((name, expect), node) in expected.iter().zip(&actual) {
            match expect {
                Expect::Show(s) => check(&what(name), s.clone(), normalise(name, &node.show)),
                Expect::Raw(b) => check(&what(name), hex(b), node.raw().to_string()),
            }
        }
        expected_experts.extend(expected_expert(opt.number, opt.value.len()));
        start = end;
        previous = opt.number.0;
    }

    // Payload: tshark files it as a block payload when a Block1/Block2 option is present.
    let has_block = msg.has_option(OptionNumber::BLOCK1) || msg.has_option(OptionNumber::BLOCK2);
    let (payload_field, length_field) = if has_block {
        ("coap.block_payload", "coap.block_length")
    } else {
        ("coap.payload", "coap.payload_length")
    };
    let marker = coap.child("coap.opt.end_marker").is_some();
    check(
        "end-of-options marker",
        (!msg.payload().is_empty()).to_string(),
        marker.to_string(),
    );
    let payload = coap.child(payload_field);
    check(
        payload_field,
        hex(msg.payload()),
        payload.map_or(String::new(), |p| p.raw().to_string()),
    );
    if !msg.payload().is_empty() {
        // The length sits beside the block payload but under the plain payload.
        let length = coap
            .show_of(length_field)
            .or_else(|| payload?.show_of(length_field));
        check(
            length_field,
            msg.payload().len().to_string(),
            length.unwrap_or_default().to_string(),
        );
    }

    // Expert info: exactly the expected warnings, nothing malformed otherwise.
    let mut all = Vec::new();
    packet.descendants(&mut all);
    let mut experts: Vec<String> = all
        .iter()
        .filter(|n| n.name == "_ws.expert")
        .map(|n| {
            let message = n.show_of("_ws.expert.message").unwrap_or_default();
            let severity = n.showname.split(['(', '/']).nth(1).unwrap_or_default();
            format!("{severity}: {message}")
        })
        .collect();
    let mut wanted: Vec<String> = expected_experts
        .iter()
        .map(|m| format!("Warning: {m}"))
        .collect();
    experts.sort();
    wanted.sort();
    check(
        "expert infos",
        format!("{wanted:?}"),
        format!("{experts:?}"),
    );
    let malformed = all
        .iter()
        .filter(|n| n.name.starts_with("_ws.malformed"))
        .count();
    let malformed_expected = expected_experts
        .iter()
        .filter(|m| is_malformed_group(m))
        .count();
    check(
        "malformed markers",
        malformed_expected.to_string(),
        malformed.to_string(),
    );
    errors
}

/// The option number in an option description such as `Type 11, Critical, Unsafe`.
fn desc_number(desc: &str) -> String {
    desc.strip_prefix("Type ")
        .and_then(|d| d.split(',').next())
        .unwrap_or(desc)
        .to_string()
}

/// tshark's name for the code (`GET`, `2.05 Content`), unless it calls it Unknown.
fn tshark_code_name(coap: &Node) -> Option<String> {
    let shown = coap.child("coap.code")?.showname.strip_prefix("Code: ")?;
    let name = shown.rsplit_once(" (")?.0;
    (!name.starts_with("Unknown")).then(|| name.to_string())
}

/// Our name for a code in tshark's style: bare method names, dotted responses.
fn our_code_name(code: Code) -> String {
    match code {
        Code::EMPTY => "Empty Message".to_string(),
        c if c.is_request() => c.name().unwrap_or_default().to_string(),
        c => c.to_string(),
    }
}

/// tshark writes `text/plain; charset=utf-8` where the registry has no space.
fn normalise(field: &str, show: &str) -> String {
    if field == "coap.opt.ctype" || field == "coap.opt.accept" {
        show.replace("; ", ";")
    } else {
        show.to_string()
    }
}

// ---------------------------------------------------------------------------------------------

#[test]
#[ignore = "needs tshark"]
fn tshark_dissects_our_messages_as_encoded() {
    let version = require_tool("tshark", &["--version"], "TShark", "tshark");
    let named = (0..=255u8).filter(|&b| Code(b).name().is_some()).count();
    assert_eq!(named, CODES.len(), "CODES must list every named Code");

    let specs = messages();
    let datagrams: Vec<Vec<u8>> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let datagram = encode(s, 0x4000 + i as u16);
            assert_round_trip(s, 0x4000 + i as u16, &datagram);
            datagram
        })
        .collect();
    let dir = TempDir::new("tshark");
    let file = dir.path().join("messages.pcap");
    std::fs::write(&file, pcap(&datagrams)).expect("write pcap");

    // A private configuration directory keeps personal Wireshark preferences out of the run.
    let out = Command::new("tshark")
        .env("WIRESHARK_CONFIG_DIR", dir.path())
        .args(["-n", "-d", "udp.port==5683,coap", "-T", "pdml", "-r"])
        .arg(&file)
        .output()
        .expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let packets = parse_pdml(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(packets.len(), datagrams.len(), "tshark read every packet");

    let errors: Vec<String> = datagrams
        .iter()
        .zip(&packets)
        .enumerate()
        .flat_map(|(i, (d, p))| compare(i, d, p))
        .collect();
    assert!(
        errors.is_empty(),
        "{version} disagrees with our encoding in {} places:\n{}",
        errors.len(),
        errors.join("\n")
    );
}
