//! What crosses the engine boundary besides events: how a datagram arrived, a datagram to
//! send, what became of a received one, and a received message as the application sees it.

use crate::event::RequestId;
use crate::stats::DropCause;
use core::net::{IpAddr, SocketAddr};
use covey_core::{Code, Message, MessageType};

/// How a datagram reached this endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LocalAddr {
    /// The group address it was sent to, when it arrived by multicast.
    pub multicast_group: Option<IpAddr>,
    /// The local socket address it arrived on, when the driver knows it.
    pub socket: Option<SocketAddr>,
    /// Whether it came in on this host's loopback interface, when the driver knows (from
    /// the packet-info control message): only then is a loopback source really local.
    pub on_loopback: Option<bool>,
    /// The unicast address it was sent to, when the driver knows (from the same message).
    pub destination: Option<IpAddr>,
}

impl LocalAddr {
    /// Arrived by unicast.
    pub const UNICAST: LocalAddr = LocalAddr {
        multicast_group: None,
        socket: None,
        on_loopback: None,
        destination: None,
    };

    /// The group it came to, if it came by multicast and this build serves groups (the
    /// `multicast` feature); always `None` without it, so the compiler leaves out what
    /// answers groups.
    pub(crate) fn group(&self) -> Option<IpAddr> {
        #[cfg(feature = "multicast")]
        return self.multicast_group;
        #[cfg(not(feature = "multicast"))]
        None
    }

    /// Arrived on group address `group`.
    pub const fn multicast(group: IpAddr) -> LocalAddr {
        LocalAddr {
            multicast_group: Some(group),
            ..LocalAddr::UNICAST
        }
    }

    /// The same, noting the local socket address it arrived on.
    pub const fn on_socket(self, socket: SocketAddr) -> LocalAddr {
        LocalAddr {
            socket: Some(socket),
            ..self
        }
    }

    /// The same, noting the unicast address it was sent to.
    pub const fn sent_to(self, destination: IpAddr) -> LocalAddr {
        LocalAddr {
            destination: Some(destination),
            ..self
        }
    }

    /// The same, noting whether it came in on the loopback interface.
    pub const fn arrived_on_loopback(self, on_loopback: bool) -> LocalAddr {
        LocalAddr {
            on_loopback: Some(on_loopback),
            ..self
        }
    }

    /// Whether a datagram from `source` that arrived this way claims a loopback source it
    /// cannot have: the driver saw it come in on another interface (a spoofed
    /// `::ffff:127.0.0.1` from the network reaches a dual-stack socket).
    pub fn is_spoofed_loopback(&self, source: SocketAddr) -> bool {
        self.on_loopback == Some(false) && source.ip().to_canonical().is_loopback()
    }
}

/// A datagram to send, written into the caller's buffer by `poll_transmit`, with what a
/// driver or simulator needs to know about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Transmit {
    /// Where to send it.
    pub destination: SocketAddr,
    /// Its length at the start of the buffer.
    pub size: usize,
    /// Where to send it from: the local socket the peer last reached (or the request it
    /// answers arrived on), and the group that request was sent to, when known.
    pub source: LocalAddr,
    /// CON, NON, ACK or RST.
    pub message_type: MessageType,
    /// Its code (a method, a response code, or Empty).
    pub code: Code,
    /// Its message ID.
    pub message_id: u16,
    /// The outgoing request it belongs to, when it is one of this endpoint's requests.
    pub request: Option<RequestId>,
    /// 0 for a first transmission, n for the n-th retransmission of a CON.
    pub retransmission: u8,
}

/// What became of a datagram handed to `handle_datagram`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reception {
    /// A new message, taken in (a request, a response, an ACK or RST that matched).
    Accepted,
    /// A copy of a message already seen, answered from the reply cache or ignored.
    Duplicate,
    /// Dropped or refused (answered with RST, 4.xx or 5.03 where the RFC says so).
    Rejected(DropCause),
}

/// A received message as the application sees it.
#[derive(Debug, Clone, Copy)]
pub struct Received<'a> {
    /// The sender.
    pub source: SocketAddr,
    /// The group address it arrived on, if it came by multicast.
    pub group: Option<IpAddr>,
    /// The local socket address it arrived on, if the driver told the engine.
    pub local: Option<SocketAddr>,
    /// Whether it came in on this host's loopback interface, if the driver told the engine.
    pub on_loopback: Option<bool>,
    /// The unicast address it was sent to, if the driver told the engine.
    pub destination: Option<IpAddr>,
    /// The parsed message (the last block of a block-wise transfer).
    pub message: Message<'a>,
    /// Its size on the wire (the UDP payload) in bytes.
    pub wire_len: usize,
    /// The reassembled body of a block-wise transfer, if there was one.
    pub body: Option<&'a [u8]>,
    /// For a request that came OSCORE-protected, the kid it was verified under (the
    /// client's Sender ID); `message` is then the decrypted inner request.
    #[cfg(feature = "oscore")]
    pub oscore_kid: Option<&'a [u8]>,
    /// For a request under an OSCORE context EDHOC set up, the peer's credential kid (hex).
    #[cfg(feature = "edhoc")]
    pub edhoc_kid: Option<&'a str>,
}

impl<'a> Received<'a> {
    /// Whether it arrived on a group address.
    pub fn is_multicast(&self) -> bool {
        self.group.is_some()
    }

    /// The whole payload: the reassembled body, or the message's payload.
    pub fn payload(&self) -> &'a [u8] {
        self.body.unwrap_or_else(|| self.message.payload())
    }
}
