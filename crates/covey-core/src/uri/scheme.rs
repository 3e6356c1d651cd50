//! The two CoAP URI schemes (RFC 7252 §6.1, §6.2).

/// A CoAP URI scheme; `coaps` (DTLS) is a distinct origin from `coap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// `coap`: plain UDP, default port 5683.
    Coap,
    /// `coaps`: DTLS, default port 5684.
    Coaps,
}

impl Scheme {
    /// The port implied when a URI gives none.
    pub const fn default_port(self) -> u16 {
        match self {
            Scheme::Coap => 5683,
            Scheme::Coaps => 5684,
        }
    }

    /// The canonical (lower-case) name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scheme::Coap => "coap",
            Scheme::Coaps => "coaps",
        }
    }

    /// The scheme named `name`, compared case-insensitively.
    pub fn from_name(name: &str) -> Option<Scheme> {
        if name.eq_ignore_ascii_case("coap") {
            Some(Scheme::Coap)
        } else if name.eq_ignore_ascii_case("coaps") {
            Some(Scheme::Coaps)
        } else {
            None
        }
    }
}

impl core::fmt::Display for Scheme {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ports() {
        assert_eq!(Scheme::from_name("CoAPs"), Some(Scheme::Coaps));
        assert_eq!(Scheme::from_name("coap"), Some(Scheme::Coap));
        assert_eq!(Scheme::from_name("http"), None);
        assert_eq!(Scheme::Coap.default_port(), 5683);
        assert_eq!(Scheme::Coaps.default_port(), 5684);
        assert_eq!(Scheme::Coaps.as_str(), "coaps");
    }
}
