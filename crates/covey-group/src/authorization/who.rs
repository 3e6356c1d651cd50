//! Whom a policy rule speaks of: an identity, or everyone of a kind.

use covey_proto::PeerIdentity;
use std::net::SocketAddr;
use std::str::FromStr;

/// The requester a rule applies to, as the policy file names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Who {
    /// `anyone`: every request, with or without an identity.
    Anyone,
    /// `authenticated`: every request that came with an identity.
    Authenticated,
    /// `loopback`: requests from a loopback address of this host (local tools, the web
    /// console and HTTP proxy of `covey gateway`).
    Loopback,
    /// `psk:NAME`: a pre-shared key with this identity.
    Psk(String),
    /// `subject:DN`: a certificate with exactly this subject, which the server's trust
    /// anchors validated (an unvalidated certificate has an empty subject).
    Subject(String),
    /// `sha256:HEX`: a certificate (or raw public key) with this SHA-256 fingerprint.
    Fingerprint([u8; 32]),
    /// `oscore:HEX`: an OSCORE request under this kid (the client's Sender ID; `oscore:`
    /// alone names the empty one).
    Oscore(Vec<u8>),
    /// `edhoc:HEX`: a request under an OSCORE context EDHOC set up with a peer whose
    /// credential has this kid.
    Edhoc(String),
}

/// Who sent a request, as far as authorization cares.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Requester {
    /// The identity it proved over a secured session; `None` in the clear.
    pub identity: Option<PeerIdentity>,
    /// Whether it came from a loopback address over the loopback interface.
    pub loopback: bool,
}

impl Requester {
    /// The sender at `source` that proved `identity` (if any), its datagram having come in
    /// on the loopback interface or not (`on_loopback`, `None` when the host cannot tell).
    /// An IPv4-mapped loopback address counts as loopback, as a dual-stack socket reports
    /// IPv4 peers that way; but anyone on the network can write one, so it counts only
    /// when it did not come in on another interface.
    pub fn new(
        identity: Option<PeerIdentity>,
        source: SocketAddr,
        on_loopback: Option<bool>,
    ) -> Requester {
        Requester {
            identity,
            loopback: source.ip().to_canonical().is_loopback() && on_loopback != Some(false),
        }
    }
}

impl Who {
    /// Whether the rule applies to `requester`.
    pub fn matches(&self, requester: &Requester) -> bool {
        let identity = requester.identity.as_ref();
        match (self, identity) {
            (Who::Anyone, _) => true,
            (Who::Authenticated, id) => id.is_some(),
            (Who::Loopback, _) => requester.loopback,
            (Who::Psk(name), Some(PeerIdentity::Psk(psk))) => name == psk,
            (Who::Subject(dn), Some(PeerIdentity::Certificate { subject, .. })) => {
                !dn.is_empty() && dn == subject
            }
            (Who::Fingerprint(want), Some(PeerIdentity::Certificate { fingerprint, .. })) => {
                want == fingerprint
            }
            (Who::Oscore(want), Some(PeerIdentity::Oscore(kid))) => want == kid,
            (Who::Edhoc(want), Some(PeerIdentity::Edhoc(kid))) => want == kid,
            _ => false,
        }
    }
}

impl FromStr for Who {
    type Err = String;

    fn from_str(text: &str) -> Result<Who, String> {
        match text {
            "anyone" => return Ok(Who::Anyone),
            "authenticated" => return Ok(Who::Authenticated),
            "loopback" => return Ok(Who::Loopback),
            _ => {}
        }
        let (kind, name) = text.split_once(':').ok_or_else(|| {
            format!(
                "\"{text}\" names no one: use anyone, authenticated, loopback, psk:IDENTITY, \
                 subject:DN, sha256:FINGERPRINT, oscore:KID or edhoc:KID"
            )
        })?;
        if kind == "oscore" {
            return kid(name).map(Who::Oscore);
        }
        if kind == "edhoc" {
            // Kept as the lowercase hex the identity prints as.
            let bytes = kid(name).map_err(|e| e.replacen("oscore:", "edhoc:", 1))?;
            if bytes.is_empty() {
                return Err(format!("\"{text}\" has an empty kid"));
            }
            return Ok(Who::Edhoc(
                bytes.iter().map(|b| format!("{b:02x}")).collect(),
            ));
        }
        if name.is_empty() {
            return Err(format!("\"{text}\" has an empty {kind}"));
        }
        match kind {
            "psk" => Ok(Who::Psk(name.to_string())),
            "subject" => Ok(Who::Subject(name.to_string())),
            "sha256" => fingerprint(name).map(Who::Fingerprint),
            _ => Err(format!(
                "\"{kind}:\" is not a kind of identity (psk:, subject:, sha256:, oscore: or edhoc:)"
            )),
        }
    }
}

/// An OSCORE kid from its hex digits (none for the empty kid).
fn kid(text: &str) -> Result<Vec<u8>, String> {
    let bad = || format!("oscore:{text} is not hexadecimal digits in pairs");
    if !text.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            let pair = text.get(i..i + 2).ok_or_else(bad)?;
            u8::from_str_radix(pair, 16).map_err(|_| bad())
        })
        .collect()
}

/// 32 bytes from 64 hex digits, optionally in colon-separated pairs as tools print them.
fn fingerprint(text: &str) -> Result<[u8; 32], String> {
    let digits: Vec<u8> = text.bytes().filter(|b| *b != b':').collect();
    let bad = || format!("sha256:{text} is not 64 hexadecimal digits");
    if digits.len() != 64 {
        return Err(bad());
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks(2)) {
        let pair = std::str::from_utf8(pair).map_err(|_| bad())?;
        *byte = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert(subject: &str, fingerprint: [u8; 32]) -> Requester {
        Requester {
            identity: Some(PeerIdentity::Certificate {
                subject: subject.into(),
                fingerprint,
            }),
            loopback: false,
        }
    }

    fn psk(name: &str) -> Requester {
        Requester {
            identity: Some(PeerIdentity::Psk(name.into())),
            loopback: false,
        }
    }

    #[test]
    fn an_edhoc_kid_matches_only_that_peers_credential() {
        let under = |kid: &str| Requester {
            identity: Some(PeerIdentity::Edhoc(kid.into())),
            loopback: false,
        };
        let who: Who = "edhoc:2B".parse().unwrap();
        assert!(who.matches(&under("2b")));
        assert!(!who.matches(&under("0a")));
        let oscore = Requester {
            identity: Some(PeerIdentity::Oscore(vec![0x2b])),
            loopback: false,
        };
        assert!(
            !who.matches(&oscore),
            "an OSCORE kid is not an EDHOC credential"
        );
        assert!("edhoc:".parse::<Who>().is_err());
        assert_eq!(
            "edhoc:2g".parse::<Who>().unwrap_err(),
            "edhoc:2g is not hexadecimal digits in pairs"
        );
    }

    #[test]
    fn an_oscore_kid_matches_only_requests_under_that_kid() {
        let under = |kid: &[u8]| Requester {
            identity: Some(PeerIdentity::Oscore(kid.to_vec())),
            loopback: false,
        };
        let who: Who = "oscore:0c1a".parse().unwrap();
        assert!(who.matches(&under(&[0x0c, 0x1a])));
        assert!(!who.matches(&under(&[0x0c])));
        assert!(!who.matches(&psk("0c1a")));
        let empty: Who = "oscore:".parse().unwrap();
        assert!(empty.matches(&under(&[])));
        assert!("oscore:0g".parse::<Who>().is_err());
    }

    #[test]
    fn identities_match_only_their_own_kind_and_name() {
        let who: Who = "psk:ward-3".parse().unwrap();
        assert!(who.matches(&psk("ward-3")));
        assert!(!who.matches(&psk("ward-33")));
        assert!(!who.matches(&cert("ward-3", [0; 32])));
        let who: Who = "subject:CN=em".parse().unwrap();
        assert!(who.matches(&cert("CN=em", [1; 32])));
        assert!(!who.matches(&cert("CN=em2", [1; 32])));
        assert!(!who.matches(&psk("CN=em")));
    }

    #[test]
    fn fingerprints_read_with_or_without_colons() {
        let plain = format!("sha256:{}", "ab".repeat(32));
        let colons = format!("sha256:{}", vec!["AB"; 32].join(":"));
        for text in [plain, colons] {
            let who: Who = text.parse().unwrap();
            assert!(who.matches(&cert("", [0xab; 32])), "{text}");
            assert!(!who.matches(&cert("", [0xac; 32])), "{text}");
        }
        let short = "sha256:abcd".parse::<Who>().unwrap_err();
        assert!(short.contains("64 hexadecimal digits"), "{short}");
        let odd = format!("sha256:{}", "zz".repeat(32));
        assert!(odd.parse::<Who>().is_err());
    }

    #[test]
    fn loopback_sources_in_every_spelling_and_only_over_loopback() {
        for local in [
            "127.0.0.1:9",
            "127.3.2.1:9",
            "[::1]:9",
            "[::ffff:127.0.0.1]:9",
        ] {
            for on_loopback in [Some(true), None] {
                assert!(
                    Requester::new(None, local.parse().unwrap(), on_loopback).loopback,
                    "{local}"
                );
            }
            assert!(
                !Requester::new(None, local.parse().unwrap(), Some(false)).loopback,
                "{local} from another interface"
            );
        }
        for remote in [
            "192.0.2.1:9",
            "[2001:db8::1]:9",
            "[::ffff:192.0.2.1]:9",
            "[::]:9",
        ] {
            assert!(
                !Requester::new(None, remote.parse().unwrap(), Some(true)).loopback,
                "{remote}"
            );
        }
    }

    #[test]
    fn kinds_of_requesters() {
        let clear = Requester::default();
        let local = Requester {
            loopback: true,
            ..Requester::default()
        };
        assert!(Who::Anyone.matches(&clear));
        assert!(!Who::Authenticated.matches(&clear));
        assert!(Who::Authenticated.matches(&psk("a")));
        assert!(Who::Loopback.matches(&local));
        assert!(!Who::Loopback.matches(&psk("a")));
    }

    #[test]
    fn unknown_names_are_refused_with_the_known_kinds() {
        let e = "operator".parse::<Who>().unwrap_err();
        assert!(e.contains("psk:IDENTITY"), "{e}");
        let e = "rpk:abc".parse::<Who>().unwrap_err();
        assert!(e.contains("\"rpk:\""), "{e}");
        assert!("psk:".parse::<Who>().is_err());
    }
}
