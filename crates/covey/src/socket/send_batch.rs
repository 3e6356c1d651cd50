//! Datagrams queued for one `sendmmsg` call, in buffers allocated once.

use std::io;
use std::net::SocketAddr;

/// Most datagrams handed to the kernel in one call.
pub const SEND_BATCH_MAX: usize = 64;

/// Up to `capacity` datagrams waiting to be sent in one system call; slots are reused, so
/// queueing allocates nothing.
#[derive(Debug)]
pub struct SendBatch {
    data: Vec<u8>,
    slot: usize,
    lens: Vec<usize>,
    destinations: Vec<SocketAddr>,
    /// Slots filled.
    len: usize,
    /// Slots already sent (from the front).
    sent: usize,
}

impl SendBatch {
    /// Room for `capacity` datagrams (at most [`SEND_BATCH_MAX`]) of up to `max_datagram`
    /// bytes each.
    pub fn new(capacity: usize, max_datagram: usize) -> SendBatch {
        let capacity = capacity.clamp(1, SEND_BATCH_MAX);
        let slot = max_datagram.max(1);
        SendBatch {
            data: vec![0; capacity * slot],
            slot,
            lens: vec![0; capacity],
            destinations: vec![SocketAddr::from(([0, 0, 0, 0], 0)); capacity],
            len: 0,
            sent: 0,
        }
    }

    /// Datagrams waiting to be sent.
    pub fn len(&self) -> usize {
        self.len - self.sent
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len == self.sent
    }

    /// True when no further datagram can be queued before the batch is sent.
    pub fn is_full(&self) -> bool {
        self.len == self.lens.len()
    }

    /// The buffer of the next free slot, to write a datagram into before [`commit`]
    /// (`None` when the batch is full).
    ///
    /// [`commit`]: SendBatch::commit
    pub fn next_buf(&mut self) -> Option<&mut [u8]> {
        if self.is_full() {
            return None;
        }
        let start = self.len * self.slot;
        Some(&mut self.data[start..start + self.slot])
    }

    /// Queues the `size` bytes written into [`next_buf`](SendBatch::next_buf) for
    /// `destination`; false when the batch is full or `size` exceeds a slot.
    pub fn commit(&mut self, destination: SocketAddr, size: usize) -> bool {
        if self.is_full() || size > self.slot {
            return false;
        }
        self.lens[self.len] = size;
        self.destinations[self.len] = destination;
        self.len += 1;
        true
    }

    /// Copies `datagram` into the next slot; false when full or too large.
    pub fn push(&mut self, destination: SocketAddr, datagram: &[u8]) -> bool {
        let Some(buf) = self.next_buf() else {
            return false;
        };
        let Some(target) = buf.get_mut(..datagram.len()) else {
            return false;
        };
        target.copy_from_slice(datagram);
        self.commit(destination, datagram.len())
    }

    /// The first datagram not sent yet.
    pub fn front(&self) -> Option<(SocketAddr, &[u8])> {
        (!self.is_empty()).then(|| self.get(self.sent))
    }

    /// Drops the first waiting datagram (one the kernel refused).
    pub fn skip(&mut self) {
        self.advance(1);
    }

    /// Forgets every queued datagram.
    pub fn clear(&mut self) {
        self.len = 0;
        self.sent = 0;
    }

    /// Marks the first `n` waiting datagrams as sent; the batch empties when all are.
    pub(crate) fn advance(&mut self, n: usize) {
        self.sent = (self.sent + n).min(self.len);
        if self.sent == self.len {
            self.clear();
        }
    }

    /// The waiting datagrams, in order.
    pub(crate) fn pending(&self) -> impl Iterator<Item = (SocketAddr, &[u8])> + '_ {
        (self.sent..self.len).map(|i| self.get(i))
    }

    fn get(&self, i: usize) -> (SocketAddr, &[u8]) {
        let start = i * self.slot;
        (
            self.destinations[i],
            &self.data[start..start + self.lens[i]],
        )
    }
}

/// Sends the waiting datagrams of `batch` with one `sendmmsg` on `fd`, each destination
/// mapped with `map`; returns how many the kernel took (at least one), or the error of the
/// first one (`WouldBlock` when the socket buffer is full).
#[cfg(target_os = "linux")]
pub(crate) fn send_mmsg(
    fd: std::os::fd::BorrowedFd<'_>,
    batch: &SendBatch,
    map: impl Fn(SocketAddr) -> SocketAddr,
) -> io::Result<usize> {
    use std::os::fd::AsRawFd;

    let mut addrs: [Option<socket2::SockAddr>; SEND_BATCH_MAX] = std::array::from_fn(|_| None);
    // SAFETY: `iovec` and `mmsghdr` are plain C structs for which all-zero bytes are a
    // valid (empty) value.
    let mut iovs: [libc::iovec; SEND_BATCH_MAX] = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut headers: [libc::mmsghdr; SEND_BATCH_MAX] = unsafe { std::mem::zeroed() };
    let mut count = 0;
    for (destination, datagram) in batch.pending().take(SEND_BATCH_MAX) {
        addrs[count] = Some(socket2::SockAddr::from(map(destination)));
        iovs[count] = libc::iovec {
            iov_base: datagram.as_ptr() as *mut libc::c_void,
            iov_len: datagram.len(),
        };
        count += 1;
    }
    // Pointers are taken only once the arrays are filled, so nothing moves or is reborrowed
    // under them.
    let iov_base = iovs.as_mut_ptr();
    for (i, (header, addr)) in headers.iter_mut().zip(&addrs).take(count).enumerate() {
        if let Some(addr) = addr {
            header.msg_hdr.msg_name = addr.as_ptr() as *mut libc::c_void;
            header.msg_hdr.msg_namelen = addr.len();
        }
        header.msg_hdr.msg_iov = iov_base.wrapping_add(i);
        header.msg_hdr.msg_iovlen = 1;
    }
    if count == 0 {
        return Ok(0);
    }
    loop {
        // SAFETY: `headers[..count]` are initialised above; each points at an address in
        // `addrs` and one iovec in `iovs` describing a datagram borrowed from `batch`, all of
        // which outlive this call; the kernel only reads them (and writes `msg_len`).
        let sent = unsafe {
            libc::sendmmsg(
                fd.as_raw_fd(),
                headers.as_mut_ptr(),
                count as libc::c_uint,
                0,
            )
        };
        if sent >= 0 {
            return Ok(sent as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Sends the waiting datagrams one `sendto` at a time where `sendmmsg` is missing.
#[cfg(not(target_os = "linux"))]
pub(crate) fn send_mmsg(
    fd: std::os::fd::BorrowedFd<'_>,
    batch: &SendBatch,
    map: impl Fn(SocketAddr) -> SocketAddr,
) -> io::Result<usize> {
    let socket = socket2::SockRef::from(&fd);
    let mut count = 0;
    for (destination, datagram) in batch.pending() {
        match socket.send_to(datagram, &map(destination).into()) {
            Ok(_) => count += 1,
            Err(e) if count == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_fill_send_and_reset() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let mut b = SendBatch::new(2, 8);
        assert!(b.is_empty());
        assert!(b.push(a, b"one"));
        assert!(!b.push(a, b"too long!"), "larger than a slot");
        let buf = b.next_buf().unwrap();
        buf[..3].copy_from_slice(b"two");
        assert!(b.commit(a, 3));
        assert!(b.is_full() && b.next_buf().is_none());
        assert_eq!(b.front(), Some((a, &b"one"[..])));
        b.advance(1);
        assert_eq!(b.len(), 1);
        assert_eq!(b.pending().collect::<Vec<_>>(), vec![(a, &b"two"[..])]);
        b.advance(1);
        assert!(b.is_empty() && !b.is_full());
    }

    #[test]
    fn sendmmsg_delivers_every_datagram_in_order() {
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = rx.local_addr().unwrap();
        let mut b = SendBatch::new(8, 64);
        for i in 0..5u8 {
            assert!(b.push(to, &[i; 3]));
        }
        let fd = std::os::fd::AsFd::as_fd(&tx);
        let n = send_mmsg(fd, &b, |d| d).unwrap();
        assert_eq!(n, 5);
        let mut buf = [0u8; 16];
        for i in 0..5u8 {
            let (len, from) = rx.recv_from(&mut buf).unwrap();
            assert_eq!((&buf[..len], from), (&[i; 3][..], tx.local_addr().unwrap()));
        }
    }
}
