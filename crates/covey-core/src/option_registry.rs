//! Option numbers and the registry of known options (RFC 7252 §5.10 and §12.2, RFC 7641,
//! RFC 7959, RFC 7967, RFC 8613, RFC 8768, RFC 9175).

/// An option number. Its properties (critical, unsafe, no-cache-key) follow from its bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OptionNumber(pub u16);

/// How an option's value is encoded (RFC 7252 §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionFormat {
    /// Zero-length value.
    Empty,
    /// Opaque bytes.
    Opaque,
    /// Unsigned integer in network order, fewest bytes.
    Uint,
    /// UTF-8 string.
    String,
}

/// One entry of the option registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionDefinition {
    /// The option number.
    pub number: OptionNumber,
    /// The registered name, as in the RFCs ("Uri-Path").
    pub name: &'static str,
    /// Value format.
    pub format: OptionFormat,
    /// Smallest legal value length in bytes.
    pub min_len: u16,
    /// Largest legal value length in bytes.
    pub max_len: u16,
    /// Whether the option may occur more than once.
    pub repeatable: bool,
}

/// What parsing and checking need of a known option, without its name: a table of 8-byte
/// entries that a node's firmware carries instead of the registry with its names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionRule {
    /// The option number.
    pub number: OptionNumber,
    /// Value format.
    pub format: OptionFormat,
    /// Whether the option may occur more than once.
    pub repeatable: bool,
    /// Smallest legal value length in bytes.
    pub min_len: u16,
    /// Largest legal value length in bytes.
    pub max_len: u16,
}

macro_rules! registry {
    ($( $konst:ident = $num:literal, $name:literal, $fmt:ident, $min:literal..=$max:literal, $rep:literal; )*) => {
        impl OptionNumber {
            $(
                #[doc = concat!("Option ", stringify!($num), ": ", $name, ".")]
                pub const $konst: OptionNumber = OptionNumber($num);
            )*
        }

        /// Every option this crate knows, in ascending number order.
        pub static OPTION_REGISTRY: &[OptionDefinition] = &[
            $( OptionDefinition {
                number: OptionNumber($num),
                name: $name,
                format: OptionFormat::$fmt,
                min_len: $min,
                max_len: $max,
                repeatable: $rep,
            }, )*
        ];

        /// The registry's rules without names, in the same order.
        pub static OPTION_RULES: &[OptionRule] = &[
            $( OptionRule {
                number: OptionNumber($num),
                format: OptionFormat::$fmt,
                repeatable: $rep,
                min_len: $min,
                max_len: $max,
            }, )*
        ];
    };
}

registry! {
    IF_MATCH = 1, "If-Match", Opaque, 0..=8, true;
    URI_HOST = 3, "Uri-Host", String, 1..=255, false;
    ETAG = 4, "ETag", Opaque, 1..=8, true;
    IF_NONE_MATCH = 5, "If-None-Match", Empty, 0..=0, false;
    OBSERVE = 6, "Observe", Uint, 0..=3, false;
    URI_PORT = 7, "Uri-Port", Uint, 0..=2, false;
    LOCATION_PATH = 8, "Location-Path", String, 0..=255, true;
    OSCORE = 9, "OSCORE", Opaque, 0..=255, false;
    URI_PATH = 11, "Uri-Path", String, 0..=255, true;
    CONTENT_FORMAT = 12, "Content-Format", Uint, 0..=2, false;
    MAX_AGE = 14, "Max-Age", Uint, 0..=4, false;
    URI_QUERY = 15, "Uri-Query", String, 0..=255, true;
    HOP_LIMIT = 16, "Hop-Limit", Uint, 1..=1, false;
    ACCEPT = 17, "Accept", Uint, 0..=2, false;
    Q_BLOCK1 = 19, "Q-Block1", Uint, 0..=3, false;
    LOCATION_QUERY = 20, "Location-Query", String, 0..=255, true;
    EDHOC = 21, "EDHOC", Empty, 0..=0, false;
    BLOCK2 = 23, "Block2", Uint, 0..=3, false;
    BLOCK1 = 27, "Block1", Uint, 0..=3, false;
    SIZE2 = 28, "Size2", Uint, 0..=4, false;
    Q_BLOCK2 = 31, "Q-Block2", Uint, 0..=3, false;
    PROXY_URI = 35, "Proxy-Uri", String, 1..=1034, false;
    PROXY_SCHEME = 39, "Proxy-Scheme", String, 1..=255, false;
    SIZE1 = 60, "Size1", Uint, 0..=4, false;
    ECHO = 252, "Echo", Opaque, 1..=40, false;
    NO_RESPONSE = 258, "No-Response", Uint, 0..=1, false;
    REQUEST_TAG = 292, "Request-Tag", Opaque, 0..=8, true;
}

/// Registry index of each option number below 64 (`u8::MAX` when unknown).
static SMALL_NUMBER_INDEX: [u8; 64] = {
    let mut table = [u8::MAX; 64];
    let mut i = 0;
    while i < OPTION_REGISTRY.len() {
        let n = OPTION_REGISTRY[i].number.0 as usize;
        if n < 64 {
            table[n] = i as u8;
        }
        i += 1;
    }
    table
};

impl OptionNumber {
    /// Critical: an endpoint that does not recognise it must reject the message.
    pub const fn is_critical(self) -> bool {
        self.0 & 1 != 0
    }

    /// Elective: the opposite of critical.
    pub const fn is_elective(self) -> bool {
        !self.is_critical()
    }

    /// Unsafe to forward: a proxy that does not understand it must not forward it.
    pub const fn is_unsafe(self) -> bool {
        self.0 & 2 != 0
    }

    /// NoCacheKey: not part of the cache key (meaningful only for safe-to-forward options).
    pub const fn is_no_cache_key(self) -> bool {
        self.0 & 0x1E == 0x1C
    }

    /// The registry entry, if this crate knows the option.
    pub fn definition(self) -> Option<&'static OptionDefinition> {
        OPTION_REGISTRY.get(self.registry_index()?)
    }

    /// The option's rules, if this crate knows it: [`definition`](Self::definition)
    /// without the name, for the paths every received option takes.
    pub fn rule(self) -> Option<&'static OptionRule> {
        OPTION_RULES.get(self.registry_index()?)
    }

    /// The position in the registry (and in its rules).
    fn registry_index(self) -> Option<usize> {
        // The common options (below 64) by table, since this runs for every option received.
        if let Some(&index) = SMALL_NUMBER_INDEX.get(self.0 as usize) {
            return Some(index as usize);
        }
        OPTION_RULES
            .binary_search_by_key(&self.0, |d| d.number.0)
            .ok()
    }

    /// The registered name, if known.
    pub fn name(self) -> Option<&'static str> {
        self.definition().map(|d| d.name)
    }

    /// The known option named `name` (case-insensitive).
    pub fn from_name(name: &str) -> Option<OptionNumber> {
        OPTION_REGISTRY
            .iter()
            .find(|d| d.name.eq_ignore_ascii_case(name))
            .map(|d| d.number)
    }

    /// True when the registry knows this number.
    pub fn is_known(self) -> bool {
        self.rule().is_some()
    }

    /// True when `len` is within the registered bounds (unknown options accept any length).
    pub fn length_is_valid(self, len: usize) -> bool {
        match self.rule() {
            Some(d) => (d.min_len as usize..=d.max_len as usize).contains(&len),
            None => true,
        }
    }
}

impl core::fmt::Display for OptionNumber {
    /// The registered name, or `Option 65000` for unknown numbers.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "Option {}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_sorted_so_lookup_works() {
        assert!(OPTION_REGISTRY
            .windows(2)
            .all(|w| w[0].number.0 < w[1].number.0));
        for d in OPTION_REGISTRY {
            assert_eq!(d.number.definition(), Some(d));
        }
        // The rules are the registry's without names, entry for entry.
        assert_eq!(OPTION_RULES.len(), OPTION_REGISTRY.len());
        for (r, d) in OPTION_RULES.iter().zip(OPTION_REGISTRY) {
            let rule = OptionRule {
                number: d.number,
                format: d.format,
                repeatable: d.repeatable,
                min_len: d.min_len,
                max_len: d.max_len,
            };
            assert_eq!((r, d.number.rule()), (&rule, Some(r)));
        }
        assert_eq!(OptionNumber(2).rule(), None);
        assert_eq!(OptionNumber(1000).rule(), None);
    }

    #[test]
    fn properties_follow_the_bits() {
        // Table in spec §1.5.
        let crit = [1, 3, 5, 7, 9, 11, 15, 17, 19, 21, 23, 27, 31, 35, 39];
        for d in OPTION_REGISTRY {
            let n = d.number.0;
            if n < 64 {
                assert_eq!(d.number.is_critical(), crit.contains(&n), "option {n}");
            }
        }
        assert!(OptionNumber::URI_HOST.is_unsafe());
        assert!(!OptionNumber::ETAG.is_unsafe());
        assert!(OptionNumber::SIZE1.is_no_cache_key());
        assert!(OptionNumber::SIZE2.is_no_cache_key());
        assert!(!OptionNumber::CONTENT_FORMAT.is_no_cache_key());
        assert!(OptionNumber::NO_RESPONSE.is_unsafe());
        // RFC 9175 §2.2.1: Echo is elective, safe to forward and not part of the cache key,
        // so a server that does not know it serves the request as if it were absent.
        let echo = OptionNumber::ECHO;
        assert!(echo.is_elective() && !echo.is_unsafe() && echo.is_no_cache_key());
        // Unknown numbers are classified by their bits.
        assert!(OptionNumber(65001).is_critical());
        assert!(OptionNumber(65000).is_elective());
    }

    #[test]
    fn names_round_trip() {
        assert_eq!(
            OptionNumber::from_name("uri-path"),
            Some(OptionNumber::URI_PATH)
        );
        assert_eq!(OptionNumber::BLOCK2.name(), Some("Block2"));
        assert_eq!(OptionNumber(2049).name(), None);
    }

    #[test]
    fn length_bounds() {
        assert!(OptionNumber::ETAG.length_is_valid(8));
        assert!(!OptionNumber::ETAG.length_is_valid(0));
        assert!(!OptionNumber::ETAG.length_is_valid(9));
        assert!(OptionNumber::PROXY_URI.length_is_valid(1034));
        assert!(OptionNumber(2049).length_is_valid(5000));
    }
}
