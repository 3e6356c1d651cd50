//! The benchmark's members: G UDP sockets on 127.0.0.1, each a minimal CoAP server that
//! answers any request with a piggy-backed (CON) or NON 2.05 `21.5` in text/plain, so what
//! the benchmark measures is the EM, not the members.

use std::net::SocketAddr;
use std::sync::Arc;

use covey_core::{Code, ContentFormat, Message, MessageEncoder, MessageType, OptionNumber};
use tokio::net::UdpSocket;

use super::runtime_thread::RuntimeThread;
use crate::BenchError;

/// The reading every member reports.
const READING: &[u8] = b"21.5";

/// Members running on a thread of their own.
pub struct Members {
    /// Their addresses, in order.
    pub addrs: Vec<SocketAddr>,
    thread: RuntimeThread,
}

fn other(message: String) -> BenchError {
    BenchError::Other(message)
}

impl Members {
    /// Binds `count` sockets and serves them on a thread called `thread_name`.
    pub fn start(count: usize, thread_name: &str) -> Result<Members, BenchError> {
        let (thread, addrs) = RuntimeThread::start(
            thread_name,
            "the members' thread",
            move |ready_tx, stop_rx| async move {
                let mut addrs = Vec::with_capacity(count);
                let mut tasks = Vec::with_capacity(count);
                for _ in 0..count {
                    let socket = match UdpSocket::bind(("127.0.0.1", 0)).await {
                        Ok(s) => Arc::new(s),
                        Err(e) => {
                            let _ = ready_tx
                                .send(Err(other(format!("cannot bind a member socket: {e}"))));
                            return;
                        }
                    };
                    match socket.local_addr() {
                        Ok(a) => addrs.push(a),
                        Err(e) => {
                            let _ = ready_tx.send(Err(other(format!("member socket: {e}"))));
                            return;
                        }
                    }
                    tasks.push(tokio::spawn(serve(socket)));
                }
                let _ = ready_tx.send(Ok(addrs));
                let _ = stop_rx.await;
                for t in tasks {
                    t.abort();
                }
            },
        )?;
        Ok(Members { addrs, thread })
    }

    /// Stops every member.
    pub fn stop(self) {
        self.thread.stop();
    }
}

/// Answers every request on `socket` until aborted.
async fn serve(socket: Arc<UdpSocket>) {
    let mut buf = vec![0u8; 1500];
    let mut out = [0u8; 64];
    let mut next_mid: u16 = 1;
    loop {
        let Ok((len, peer)) = socket.recv_from(&mut buf).await else {
            continue;
        };
        let Some(n) = respond(&buf[..len], &mut out, &mut next_mid) else {
            continue;
        };
        let _ = socket.send_to(&out[..n], peer).await;
    }
}

/// The response to one datagram: an ACK 2.05 for a CON request, a NON 2.05 for a NON one;
/// `None` for anything that is not a request.
fn respond(datagram: &[u8], out: &mut [u8], next_mid: &mut u16) -> Option<usize> {
    let m = Message::parse(datagram).ok()?;
    if m.code().class() != 0 || m.code() == Code::EMPTY {
        return None;
    }
    let (kind, mid) = match m.message_type() {
        MessageType::Confirmable => (MessageType::Acknowledgement, m.message_id()),
        MessageType::NonConfirmable => {
            *next_mid = next_mid.wrapping_add(1);
            (MessageType::NonConfirmable, *next_mid)
        }
        _ => return None,
    };
    let mut enc = MessageEncoder::new(out, kind, Code::CONTENT, mid, m.token_bytes()).ok()?;
    enc.uint_option(
        OptionNumber::CONTENT_FORMAT,
        u32::from(ContentFormat::TEXT_PLAIN.0),
    )
    .ok()?;
    enc.payload(READING).ok()?;
    Some(enc.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_con_get_gets_a_piggy_backed_reading() {
        let mut req = [0u8; 32];
        let mut enc = MessageEncoder::new(
            &mut req,
            MessageType::Confirmable,
            Code::GET,
            0x1234,
            &[7, 8],
        )
        .unwrap();
        enc.option(OptionNumber::URI_PATH, b"s").unwrap();
        let n = enc.finish();
        let mut out = [0u8; 64];
        let mut mid = 0;
        let len = respond(&req[..n], &mut out, &mut mid).unwrap();
        let r = Message::parse(&out[..len]).unwrap();
        assert_eq!(r.message_type(), MessageType::Acknowledgement);
        assert_eq!((r.message_id(), r.token_bytes()), (0x1234, &[7u8, 8][..]));
        assert_eq!((r.code(), r.payload()), (Code::CONTENT, READING));
        assert_eq!(respond(&out[..len], &mut [0u8; 64], &mut mid), None);
    }
}
