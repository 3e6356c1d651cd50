//! The floor of a run: a blocking UDP echo on a thread pinned like the servers, answering
//! each request at once with an empty 2.05 (ACK to a CON, NON to a NON) and doing no other
//! work. What the generator measures against it is the kernel's round trip plus the
//! generator's own cost, i.e. the best latency any server could show in the same run.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A running echo thread; stopped when dropped.
#[derive(Debug)]
pub struct EchoServer {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EchoServer {
    /// Starts the echo on 127.0.0.1:`port`, its thread pinned to `cpu`.
    pub fn start(port: u16, cpu: Option<usize>) -> io::Result<EchoServer> {
        let socket = UdpSocket::bind(("127.0.0.1", port))?;
        // Lets the thread notice `stop` while nothing arrives.
        socket.set_read_timeout(Some(Duration::from_millis(50)))?;
        let addr = socket.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("bench-echo".into())
            .spawn(move || {
                if let Some(cpu) = cpu {
                    super::load::pin_current_thread(cpu);
                }
                let mut buf = [0u8; 1500];
                while !flag.load(Ordering::Relaxed) {
                    let Ok((n, from)) = socket.recv_from(&mut buf) else {
                        continue;
                    };
                    if let Some(len) = answer(&mut buf[..n]) {
                        let _ = socket.send_to(&buf[..len], from);
                    }
                }
            })?;
        Ok(EchoServer {
            addr,
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Turns the request in `datagram` into its answer in place: the header and token with type
/// ACK (for a CON) or NON and code 2.05, no options or payload; `None` for anything that is
/// not a CON or NON request.
fn answer(datagram: &mut [u8]) -> Option<usize> {
    let first = *datagram.first()?;
    let token_length = usize::from(first & 0x0f);
    let message_type = (first >> 4) & 0x03;
    if first >> 6 != 1 || token_length > 8 || datagram.len() < 4 + token_length {
        return None;
    }
    let reply_type = match message_type {
        0 => 2, // CON -> ACK
        1 => 1, // NON -> NON
        _ => return None,
    };
    datagram[0] = 0x40 | (reply_type << 4) | first & 0x0f;
    datagram[1] = 0x45; // 2.05 Content
    Some(4 + token_length)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_con_with_an_ack_and_keeps_id_and_token() {
        let mut con = [0x42, 0x01, 0x12, 0x34, 0xaa, 0xbb, 0xb4, b't'];
        assert_eq!(answer(&mut con), Some(6));
        assert_eq!(&con[..6], &[0x62, 0x45, 0x12, 0x34, 0xaa, 0xbb]);
        let mut non = [0x50, 0x01, 0, 1];
        assert_eq!(answer(&mut non), Some(4));
        assert_eq!(non[0], 0x50);
        assert_eq!(answer(&mut [0x60, 0, 0, 0]), None, "an ACK is not answered");
        assert_eq!(
            answer(&mut [0x48, 1, 0, 0]),
            None,
            "token longer than the datagram"
        );
    }
}
