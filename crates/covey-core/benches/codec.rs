//! Micro-benchmarks of the message codec: parse (with every option and the payload read) and
//! encode of a typical request and response, plus a check that neither allocates.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use covey_core::{Code, ContentFormat, Message, MessageEncoder, MessageType, OptionNumber};
use criterion::{criterion_group, criterion_main, Criterion};

/// The system allocator, counting every allocation.
struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds the
// `GlobalAlloc` contract; the counter has no effect on the memory handed out.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's guarantees for `layout` are passed on as they are.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by this allocator (i.e. by `System`) with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by this allocator (i.e. by `System`) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

const TOKEN: [u8; 4] = [0xde, 0xad, 0xbe, 0xef];
const PAYLOAD: [u8; 64] =
    *b"{\"t\":21.5,\"u\":\"Cel\",\"bt\":1700000000,\"n\":\"urn:dev:mac:0024beffe\"}";

/// CON GET /sensors/temp?unit=c, Accept 50.
fn encode_request(buf: &mut [u8]) -> usize {
    let mut enc = MessageEncoder::new(
        buf,
        MessageType::Confirmable,
        Code::GET,
        black_box(0x1234),
        black_box(&TOKEN),
    )
    .expect("fits");
    enc.option(OptionNumber::URI_PATH, black_box(b"sensors"))
        .and_then(|e| e.option(OptionNumber::URI_PATH, black_box(b"temp")))
        .and_then(|e| e.option(OptionNumber::URI_QUERY, black_box(b"unit=c")))
        .and_then(|e| {
            e.uint_option(
                OptionNumber::ACCEPT,
                black_box(ContentFormat::JSON.0 as u32),
            )
        })
        .expect("fits");
    enc.finish()
}

/// ACK 2.05, Content-Format 50, ETag (4 bytes), Max-Age 30, 64-byte payload.
fn encode_response(buf: &mut [u8]) -> usize {
    let mut enc = MessageEncoder::new(
        buf,
        MessageType::Acknowledgement,
        Code::CONTENT,
        black_box(0x1234),
        black_box(&TOKEN),
    )
    .expect("fits");
    enc.option(OptionNumber::ETAG, black_box(&[0x01, 0x02, 0x03, 0x04]))
        .and_then(|e| {
            e.uint_option(
                OptionNumber::CONTENT_FORMAT,
                black_box(ContentFormat::JSON.0 as u32),
            )
        })
        .and_then(|e| e.uint_option(OptionNumber::MAX_AGE, black_box(30)))
        .and_then(|e| e.payload(black_box(&PAYLOAD)))
        .expect("fits");
    enc.finish()
}

/// Parses and touches everything: each option's number and value, and the payload.
fn parse(datagram: &[u8]) -> usize {
    let m = Message::parse(datagram).expect("valid");
    let mut sum = m.message_id() as usize + m.token_bytes().len();
    for o in m.options() {
        sum += o.number.0 as usize + o.value.len();
        black_box(o.value);
    }
    sum + black_box(m.payload()).len()
}

fn encoded(f: fn(&mut [u8]) -> usize) -> ([u8; 128], usize) {
    let mut buf = [0u8; 128];
    let n = f(&mut buf);
    (buf, n)
}

/// Runs 10 000 parse+encode rounds and fails unless none of them allocated.
fn assert_no_allocations() {
    let (req, req_len) = encoded(encode_request);
    let (resp, resp_len) = encoded(encode_response);
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    for _ in 0..10_000 {
        let mut buf = [0u8; 128];
        black_box(parse(black_box(&req[..req_len])));
        black_box(parse(black_box(&resp[..resp_len])));
        black_box(encode_request(black_box(&mut buf)));
        black_box(encode_response(black_box(&mut buf)));
    }
    let allocations = ALLOCATIONS.load(Ordering::SeqCst) - before;
    assert_eq!(allocations, 0, "the codec allocated");
    println!("allocations per parse+encode: {}", allocations / 10_000);
}

fn codec(c: &mut Criterion) {
    assert_no_allocations();

    let (req, req_len) = encoded(encode_request);
    let (resp, resp_len) = encoded(encode_response);
    let request = &req[..req_len];
    let response = &resp[..resp_len];

    let mut g = c.benchmark_group("parse");
    g.bench_function("request", |b| b.iter(|| parse(black_box(request))));
    g.bench_function("response", |b| b.iter(|| parse(black_box(response))));
    g.finish();

    let mut g = c.benchmark_group("encode");
    g.bench_function("request", |b| {
        let mut buf = [0u8; 128];
        b.iter(|| encode_request(black_box(&mut buf)))
    });
    g.bench_function("response", |b| {
        let mut buf = [0u8; 128];
        b.iter(|| encode_response(black_box(&mut buf)))
    });
    g.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);
