//! The generator's side of coaps: a DTLS session table per client socket, between its engine
//! and the socket, on the wall clock.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Instant;

use covey::dtls::{DtlsConfig, SessionTable, TableTransmit};

/// One client socket's DTLS sessions.
#[derive(Debug)]
pub struct DtlsLink {
    table: SessionTable,
    local: SocketAddr,
}

impl DtlsLink {
    /// A link for `socket` with `config`'s credentials.
    pub fn new(config: DtlsConfig, socket: &UdpSocket) -> io::Result<DtlsLink> {
        Ok(DtlsLink {
            table: SessionTable::new(config).map_err(|e| io::Error::other(e.to_string()))?,
            local: socket.local_addr()?,
        })
    }

    /// Encrypts a plaintext datagram to `remote` (opening a session first if needed).
    pub fn send(&mut self, remote: SocketAddr, plaintext: &[u8]) {
        self.table
            .send(Instant::now(), self.local, remote, plaintext);
    }

    /// Decrypts a received datagram; the plaintext datagrams it held.
    pub fn receive(&mut self, from: SocketAddr, datagram: &[u8]) -> Vec<Vec<u8>> {
        self.table
            .handle_datagram(Instant::now(), self.local, from, datagram);
        std::iter::from_fn(|| self.table.poll_received())
            .map(|(_, _, plaintext)| plaintext)
            .collect()
    }

    /// Runs the table's timers (handshake retransmissions) if due.
    pub fn tick(&mut self) {
        let now = Instant::now();
        if self.table.poll_timeout().is_some_and(|t| t <= now) {
            self.table.handle_timeout(now);
        }
    }

    /// The next record to send.
    pub fn poll_record(&mut self) -> Option<TableTransmit> {
        self.table.poll_transmit()
    }
}
