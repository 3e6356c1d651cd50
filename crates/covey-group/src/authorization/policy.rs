//! The policy file: rules naming who may do what, read from TOML.

use super::action::Action;
use super::group_prefix::GroupPrefix;
use super::permission::Permission;
use super::who::{Requester, Who};
use serde::de::{Deserializer, Error as _};
use serde::Deserialize;
use std::io::Read;
use std::path::Path;
use std::str::FromStr;

/// Largest policy file read, in bytes: a policy is a few dozen rules, and a bound keeps a
/// wrong path (a disk image, /dev/zero) from filling memory.
pub const MAX_POLICY_BYTES: u64 = 256 * 1024;

/// Why a policy could not be read; each is one line naming the file (and line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read.
    #[error("{origin}: {reason}")]
    Read {
        /// The file.
        origin: String,
        /// What went wrong.
        reason: String,
    },
    /// The text is not a valid policy.
    #[error("{origin}:{line}: {message}")]
    Invalid {
        /// The file.
        origin: String,
        /// The line (from 1) the problem is on.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// One rule: whoever matches `who` may do what `may` lists (`/mc` only within `groups`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    who: Vec<Who>,
    may: Vec<Permission>,
    groups: Vec<GroupPrefix>,
    /// The line the rule starts on (from 1; 0 for built-in rules).
    line: usize,
}

impl Rule {
    /// Whether the rule lets `requester` do `action`.
    pub fn allows(&self, requester: &Requester, action: &Action) -> bool {
        let in_groups = match action {
            Action::Join(g) | Action::Leave(g) => self.groups.iter().any(|p| p.contains(*g)),
            _ => true,
        };
        in_groups
            && self.who.iter().any(|w| w.matches(requester))
            && self.may.iter().any(|p| p.covers(action))
    }
}

/// Who may do what: a request is allowed when any rule allows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    origin: String,
    rules: Vec<Rule>,
}

impl Policy {
    /// The policy when security is on but no file was given: any authenticated peer may do
    /// everything, requests in the clear nothing.
    pub fn authenticated() -> Policy {
        let everything = [
            Permission::Read,
            Permission::Manage,
            Permission::Fanout,
            Permission::McJoin,
            Permission::McLeave,
        ];
        Policy {
            origin: "the default policy (any authenticated peer)".into(),
            rules: vec![Rule {
                who: vec![Who::Authenticated],
                may: everything.to_vec(),
                groups: ["ff00::/8", "224.0.0.0/4"]
                    .iter()
                    .filter_map(|p| p.parse().ok())
                    .collect(),
                line: 0,
            }],
        }
    }

    /// Reads the policy file at `path` (at most [`MAX_POLICY_BYTES`]).
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let origin = path.display().to_string();
        let read_error = |reason: String| PolicyError::Read {
            origin: origin.clone(),
            reason,
        };
        let file = std::fs::File::open(path).map_err(|e| read_error(e.to_string()))?;
        let mut bytes = Vec::new();
        file.take(MAX_POLICY_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| read_error(e.to_string()))?;
        if bytes.len() as u64 > MAX_POLICY_BYTES {
            return Err(read_error(format!(
                "larger than {MAX_POLICY_BYTES} bytes: not a policy file"
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| PolicyError::Invalid {
            origin: origin.clone(),
            line: line_of(
                &String::from_utf8_lossy(e.as_bytes()),
                e.utf8_error().valid_up_to(),
            ),
            message: "not UTF-8 text".into(),
        })?;
        Policy::parse(&text, &origin)
    }

    /// Parses policy `text`; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Policy, PolicyError> {
        let invalid = |at: usize, message: String| PolicyError::Invalid {
            origin: origin.to_string(),
            line: line_of(text, at),
            message: message.replace('\n', " "),
        };
        let file: PolicyFile = toml::from_str(text).map_err(|e| {
            invalid(
                e.span().map_or(0, |s| s.start),
                e.message().trim().to_string(),
            )
        })?;
        let mut rules = Vec::with_capacity(file.rule.len());
        for spanned in file.rule {
            let at = spanned.span().start;
            let raw = spanned.into_inner();
            let rule = Rule {
                who: raw.who.into_iter().map(|p| p.0).collect(),
                may: raw.may.into_iter().map(|p| p.0).collect(),
                groups: raw.groups.into_iter().map(|p| p.0).collect(),
                line: line_of(text, at),
            };
            check(&rule).map_err(|m| invalid(at, m.to_string()))?;
            rules.push(rule);
        }
        Ok(Policy {
            origin: origin.to_string(),
            rules,
        })
    }

    /// Whether any rule lets `requester` do `action`.
    pub fn allows(&self, requester: &Requester, action: &Action) -> bool {
        self.rules.iter().any(|r| r.allows(requester, action))
    }

    /// Refuses `subject:` rules unless a trust anchor (`--ca`) validates the certificates
    /// they would match: anyone can write any subject into a certificate of their own.
    pub fn check_subjects(&self, trust_anchor: bool) -> Result<(), PolicyError> {
        if trust_anchor {
            return Ok(());
        }
        let subject = self.rules.iter().find_map(|rule| {
            rule.who.iter().find_map(|w| match w {
                Who::Subject(dn) => Some((rule.line, dn)),
                _ => None,
            })
        });
        match subject {
            None => Ok(()),
            Some((line, dn)) => Err(PolicyError::Invalid {
                origin: self.origin.clone(),
                line,
                message: format!(
                    "\"subject:{dn}\" needs --ca FILE, the CA that issues the client \
                     certificates: without it a subject is whatever a self-signed certificate \
                     says (pin a certificate with sha256: instead)"
                ),
            }),
        }
    }

    /// Where the policy came from (its file).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// How many rules it has.
    pub fn rules(&self) -> usize {
        self.rules.len()
    }
}

/// What makes a well-formed rule beyond its fields' syntax.
fn check(rule: &Rule) -> Result<(), &'static str> {
    let membership = rule.may.iter().any(|p| p.is_membership());
    if rule.who.is_empty() {
        Err("rule with an empty \"who\": name at least one requester")
    } else if rule.may.is_empty() {
        Err("rule with an empty \"may\": name at least one permission")
    } else if membership && rule.groups.is_empty() {
        Err("mc-join and mc-leave need \"groups\", e.g. groups = [\"ff05::/16\"]")
    } else if !membership && !rule.groups.is_empty() {
        Err("\"groups\" limits only mc-join and mc-leave, which this rule does not grant")
    } else {
        Ok(())
    }
}

/// The line (from 1) of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The file as TOML has it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    rule: Vec<toml::Spanned<RuleFields>>,
}

/// One `[[rule]]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFields {
    who: Vec<Parsed<Who>>,
    may: Vec<Parsed<Permission>>,
    #[serde(default)]
    groups: Vec<Parsed<GroupPrefix>>,
}

/// A string field read through `FromStr`, so its error names the bad value at its line.
struct Parsed<T>(T);

impl<'de, T: FromStr<Err = String>> Deserialize<'de> for Parsed<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map(Parsed).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use covey_proto::PeerIdentity;

    const EXAMPLE: &str = r#"
# Operators manage; wards may read; the EM host may move members between groups.
[[rule]]
who = ["psk:operator", "subject:CN=ops"]
may = ["read", "manage", "fanout"]

[[rule]]
who = ["authenticated"]
may = ["read"]

[[rule]]
who = ["psk:em"]
may = ["mc-join", "mc-leave"]
groups = ["ff05::/16", "239.1.0.0/16"]
"#;

    fn psk(name: &str) -> Requester {
        Requester {
            identity: Some(PeerIdentity::Psk(name.into())),
            loopback: false,
        }
    }

    fn error(text: &str) -> (usize, String) {
        match Policy::parse(text, "p.toml").unwrap_err() {
            PolicyError::Invalid { line, message, .. } => (line, message),
            e => panic!("{e}"),
        }
    }

    #[test]
    fn rules_grant_what_they_name_to_whom_they_name() {
        let p = Policy::parse(EXAMPLE, "p.toml").unwrap();
        assert_eq!(p.rules(), 3);
        let op = psk("operator");
        for a in [Action::Read, Action::Create, Action::Delete, Action::Fanout] {
            assert!(p.allows(&op, &a), "{a}");
        }
        assert!(!p.allows(&op, &Action::Join("ff05::1".parse().unwrap())));
        let ward = psk("ward-3");
        assert!(p.allows(&ward, &Action::Read));
        assert!(!p.allows(&ward, &Action::Change));
        assert!(!p.allows(&Requester::default(), &Action::Read));
        let em = psk("em");
        assert!(p.allows(&em, &Action::Join("ff05::7".parse().unwrap())));
        assert!(p.allows(&em, &Action::Leave("239.1.9.9".parse().unwrap())));
        assert!(!p.allows(&em, &Action::Join("ff02::1".parse().unwrap())));
        assert!(!p.allows(&em, &Action::Create));
    }

    #[test]
    fn the_default_policy_wants_an_identity() {
        let p = Policy::authenticated();
        let anyone = psk("x");
        assert!(p.allows(&anyone, &Action::Join("239.0.0.1".parse().unwrap())));
        assert!(p.allows(&anyone, &Action::Fanout));
        let local = Requester {
            identity: None,
            loopback: true,
        };
        assert!(!p.allows(&local, &Action::Read));
    }

    #[test]
    fn the_documented_example_is_a_valid_policy() {
        let doc = include_str!("../../../../docs/authorization.md");
        let example = doc
            .split("```toml\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .expect("a TOML example in docs/authorization.md");
        let p = Policy::parse(example, "docs/authorization.md").unwrap();
        assert_eq!(p.rules(), 3);
        assert!(p.allows(&psk("operator"), &Action::Fanout));
        let local = Requester {
            identity: None,
            loopback: true,
        };
        assert!(p.allows(&local, &Action::Read));
        assert!(!p.allows(&local, &Action::Create));
    }

    #[test]
    fn subject_rules_need_a_trust_anchor() {
        let p = Policy::parse(EXAMPLE, "p.toml").unwrap();
        let e = p.check_subjects(false).unwrap_err().to_string();
        assert!(
            e.starts_with("p.toml:3: \"subject:CN=ops\" needs --ca FILE"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        assert_eq!(p.check_subjects(true), Ok(()));
        let fingerprints = format!(
            "[[rule]]\nwho = [\"sha256:{}\"]\nmay = [\"read\"]\n",
            "ab".repeat(32)
        );
        let p = Policy::parse(&fingerprints, "p.toml").unwrap();
        assert_eq!(p.check_subjects(false), Ok(()));
        assert_eq!(Policy::authenticated().check_subjects(false), Ok(()));
    }

    #[test]
    fn an_empty_file_allows_nothing() {
        let p = Policy::parse("# nobody\n", "p.toml").unwrap();
        assert_eq!(p.rules(), 0);
        assert!(!p.allows(&psk("operator"), &Action::Read));
    }

    #[test]
    fn errors_name_the_line_and_the_problem() {
        let text = "[[rule]]\nwho = [\"anyone\"]\nmay = [\"read\", \"raed\"]\n";
        let (line, message) = error(text);
        assert_eq!(line, 3, "{message}");
        assert!(message.contains("unknown permission \"raed\""), "{message}");

        let (line, message) = error("[[rule]]\nwho = [\"operator\"]\nmay = [\"read\"]\n");
        assert_eq!(line, 2, "{message}");
        assert!(message.contains("psk:IDENTITY"), "{message}");

        let (line, message) = error("\n\n[[rule]]\nwho = [\"anyone\"]\nmay = [\"mc-join\"]\n");
        assert_eq!(line, 3, "{message}");
        assert!(message.contains("need \"groups\""), "{message}");

        let (line, message) = error("[[rule]]\nwho = [\"anyone\"]\nmay = [\"read\"]\nwhen = 1\n");
        assert_eq!(line, 4, "{message}");
        assert!(message.contains("when"), "{message}");

        let (line, _) = error("[[rule]]\nwho = [\"anyone\"\nmay = []\n");
        assert!(line >= 2);

        let text = "[[rule]]\nwho = [\"anyone\"]\nmay = [\"mc-leave\"]\ngroups = [\"::/0\"]\n";
        let (line, message) = error(text);
        assert_eq!(line, 4, "{message}");
        assert!(message.contains("ff00::/8"), "{message}");
    }

    #[test]
    fn errors_are_one_line() {
        let e = Policy::parse("[[rule]]\nwho = \"anyone\"\nmay = [\"read\"]\n", "p.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("p.toml:2: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn files_too_large_or_missing_are_refused() {
        let dir = std::env::temp_dir().join(format!("covey-policy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.toml");
        let line = "# padding padding padding padding padding padding padding padding\n";
        let text = line.repeat((MAX_POLICY_BYTES as usize / line.len()) + 2);
        std::fs::write(&big, text).unwrap();
        let e = Policy::load(&big).unwrap_err().to_string();
        assert!(e.contains("larger than"), "{e}");
        let e = Policy::load(&dir.join("absent.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("absent.toml"), "{e}");
        let ok = dir.join("ok.toml");
        std::fs::write(&ok, EXAMPLE).unwrap();
        assert_eq!(Policy::load(&ok).unwrap().rules(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
