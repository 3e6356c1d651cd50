//! The four CoAP message types (RFC 7252 §4.2–4.3).

/// A message's type: the two bits after the version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageType {
    /// Confirmable: must be acknowledged.
    Confirmable = 0,
    /// Non-confirmable: never acknowledged.
    NonConfirmable = 1,
    /// Acknowledgement of a Confirmable message.
    Acknowledgement = 2,
    /// Reset: the receiver lacks context for a message.
    Reset = 3,
}

impl MessageType {
    /// The type encoded in the two given bits (only the low two bits are read).
    pub const fn from_bits(bits: u8) -> MessageType {
        match bits & 0b11 {
            0 => MessageType::Confirmable,
            1 => MessageType::NonConfirmable,
            2 => MessageType::Acknowledgement,
            _ => MessageType::Reset,
        }
    }

    /// The short name used in traces and by Wireshark: CON, NON, ACK, RST.
    pub const fn abbreviation(self) -> &'static str {
        match self {
            MessageType::Confirmable => "CON",
            MessageType::NonConfirmable => "NON",
            MessageType::Acknowledgement => "ACK",
            MessageType::Reset => "RST",
        }
    }
}

impl core::fmt::Display for MessageType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.abbreviation())
    }
}
