//! A Block2 download from a server that breaks RFC 7959 ends with an error instead of
//! asking forever: a block other than the one asked for, a short block before the last, a
//! body past its Size2 (one block of slack) or past `Config::max_body_size`.

mod support;

use covey_core::{uint, Block, Code, Message, MessageEncoder, MessageType, OptionNumber};
use covey_proto::{Config, Duration, Event, Failure, Request, RequestParams};
use support::{addr, Network};

/// What the misbehaving server puts in its answer to a request for block `asked`.
struct Answer {
    block: Block,
    size2: Option<u32>,
    payload: usize,
}

/// Answers each request of a GET by node 1 with `answer` (piggy-backed, at most `rounds`
/// times); returns the requests sent and how the exchange ended.
fn download(
    config: Config,
    rounds: usize,
    answer: impl Fn(Option<Block>) -> Answer,
) -> (usize, Vec<Failure>, usize) {
    let mut net = Network::new(Duration::from_millis(1), 0.0, 1);
    net.drop_rule = Some(Box::new(|_, _, _| true));
    let client = net.add(addr(1), config, 1, None);
    net.request(
        client,
        addr(2),
        &Request::new(Code::GET),
        RequestParams::default(),
    )
    .unwrap();
    let mut buf = [0u8; 1200];
    let mut requests = 1;
    for _ in 0..rounds {
        let request = Message::parse(&net.log.last().unwrap().bytes).unwrap();
        let a = answer(request.block2());
        let mut enc = MessageEncoder::new(
            &mut buf,
            MessageType::Acknowledgement,
            Code::CONTENT,
            request.message_id(),
            request.token().as_bytes(),
        )
        .unwrap();
        let mut b = [0u8; 4];
        enc.option(OptionNumber::BLOCK2, a.block.encode(&mut b))
            .unwrap();
        if let Some(size2) = a.size2 {
            let mut v = [0u8; 4];
            enc.option(OptionNumber::SIZE2, uint::encode(size2, &mut v))
                .unwrap();
        }
        if a.payload > 0 {
            enc.payload(&vec![b'x'; a.payload]).unwrap();
        }
        let n = enc.finish();
        let reply = buf[..n].to_vec();
        let before = net.log.len();
        net.inject(addr(2), client, &reply);
        if net.log.len() == before {
            break;
        }
        requests += 1;
    }
    let failures = net.nodes[client]
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Failed { failure, .. } => Some(*failure),
            _ => None,
        })
        .collect();
    let responses = net.nodes[client]
        .events
        .iter()
        .filter(|(_, e)| matches!(e, Event::Response { .. }))
        .count();
    (requests, failures, responses)
}

fn block(num: u32, more: bool) -> Block {
    Block::new(num, more, 6).unwrap()
}

#[test]
fn a_server_that_always_sends_block_0_ends_the_download_at_the_second_block() {
    let (requests, failures, responses) = download(Config::default(), 100, |_| Answer {
        block: block(0, true),
        size2: None,
        payload: 1024,
    });
    assert_eq!(requests, 2);
    assert_eq!(
        failures,
        [Failure::UnexpectedBlock {
            asked: 1024,
            got: 0
        }]
    );
    assert_eq!(responses, 0);
}

#[test]
fn a_block_other_than_the_one_asked_for_ends_the_download() {
    // The server skips ahead.
    let (requests, failures, _) = download(Config::default(), 100, |asked| Answer {
        block: block(asked.map_or(0, |b| b.num + 1), true),
        size2: None,
        payload: 1024,
    });
    assert_eq!(requests, 2);
    assert_eq!(
        failures,
        [Failure::UnexpectedBlock {
            asked: 1024,
            got: 2048
        }]
    );
}

#[test]
fn a_short_block_before_the_last_ends_the_download() {
    // An empty block 0 with more to come would have the client ask for block 0 again.
    let (requests, failures, _) = download(Config::default(), 100, |_| Answer {
        block: block(0, true),
        size2: None,
        payload: 0,
    });
    assert_eq!(requests, 1);
    assert_eq!(failures, [Failure::ShortBlock { offset: 0 }]);
}

#[test]
fn a_body_growing_past_its_size2_ends_the_download() {
    let next = |asked: Option<Block>| Answer {
        block: block(asked.map_or(0, |b| b.num), true),
        size2: Some(3000),
        payload: 1024,
    };
    let (requests, failures, _) = download(Config::default(), 100, next);
    // 3000 bytes and one block of slack: blocks 0-2 (3072 bytes) pass, block 3 (4096) does not.
    assert_eq!(requests, 4);
    assert_eq!(failures, [Failure::Size2Exceeded { size2: 3000 }]);
}

#[test]
fn a_body_growing_past_max_body_size_ends_the_download() {
    let config = Config {
        max_body_size: 8192,
        ..Config::default()
    };
    let (requests, failures, _) = download(config, 100, |asked| Answer {
        block: block(asked.map_or(0, |b| b.num), true),
        size2: None,
        payload: 1024,
    });
    // Eight blocks fill the limit, and more to come cannot fit: no ninth request.
    assert_eq!(requests, 8);
    assert_eq!(failures, [Failure::ResponseTooLarge]);
}

#[test]
fn a_well_behaved_server_still_delivers_its_body() {
    let (requests, failures, responses) = download(Config::default(), 100, |asked| {
        let num = asked.map_or(0, |b| b.num);
        Answer {
            block: block(num, num < 3),
            size2: Some(3500),
            payload: if num < 3 { 1024 } else { 428 },
        }
    });
    assert_eq!((requests, responses), (4, 1));
    assert!(failures.is_empty(), "{failures:?}");
}
