//! Readiness of several [`BatchSocket`]s with one `poll` system call, so a tight loop over
//! many sockets does not pay an empty receive call for each socket that has nothing.

use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

use super::BatchSocket;

/// The sockets of a tight loop, polled together for readability.
#[derive(Debug)]
pub struct PollSet {
    fds: Vec<libc::pollfd>,
}

impl PollSet {
    /// A set over `sockets`, in that order (the sockets must outlive their use here).
    pub fn new(sockets: &[&BatchSocket]) -> PollSet {
        PollSet {
            fds: sockets
                .iter()
                .map(|s| libc::pollfd {
                    fd: s.raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect(),
        }
    }

    /// Waits up to `timeout` (zero: not at all) until a socket is readable; returns how many
    /// are. Read each with [`PollSet::is_readable`].
    pub fn poll(&mut self, timeout: Duration) -> io::Result<usize> {
        let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
        for fd in &mut self.fds {
            fd.revents = 0;
        }
        loop {
            // SAFETY: `fds` is a valid, initialised array of `fds.len()` pollfd structs that
            // lives across the call; the kernel writes only their `revents` fields.
            let n = unsafe {
                libc::poll(
                    self.fds.as_mut_ptr(),
                    self.fds.len() as libc::nfds_t,
                    millis,
                )
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Whether socket `i` had a datagram (or an error) queued at the last [`PollSet::poll`].
    pub fn is_readable(&self, i: usize) -> bool {
        self.fds
            .get(i)
            .is_some_and(|fd| fd.revents & (libc::POLLIN | libc::POLLERR) != 0)
    }
}

impl BatchSocket {
    fn raw_fd(&self) -> std::os::fd::RawFd {
        self.as_std().as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::socket::SendBatch;

    #[test]
    fn reports_only_the_socket_with_data() {
        let a = BatchSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let b = BatchSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let mut set = PollSet::new(&[&a, &b]);
        assert_eq!(set.poll(Duration::ZERO).unwrap(), 0);
        let mut out = SendBatch::new(1, 16);
        out.push(b.local_addr(), b"x");
        a.send(&mut out).unwrap();
        assert_eq!(set.poll(Duration::from_secs(5)).unwrap(), 1);
        assert!(!set.is_readable(0) && set.is_readable(1));
    }
}
