//! Which options the engine recognises (RFC 7252 §5.4.1, §5.4.5), for requests and
//! responses alike: an elective option always is (it may be ignored); a critical one must be
//! one Covey processes, within its registered length bounds, and not a forbidden repeat.
//! Knowing how to encode an option (covey-core's registry, which also says whether a number
//! is critical, unsafe or NoCacheKey) is not processing it: OSCORE, EDHOC and Q-Block are
//! registered but not implemented, so a message carrying them is rejected (with the `oscore`
//! feature a request's OSCORE option is verified before this check, endpoint/oscore.rs).
//! Proxy-Uri and Proxy-Scheme are understood, and answered 5.05 because Covey is no proxy
//! (§5.7.2).

use covey_core::{Message, OptionNumber};

/// The first critical option the engine and registry do not recognise: an unknown number,
/// a known one outside its length bounds, or a repeat of a non-repeatable one
/// (RFC 7252 §5.4.1, §5.4.5).
#[cfg(feature = "client")]
pub(crate) fn unrecognised_critical_option(message: &Message<'_>) -> Option<OptionNumber> {
    let mut previous = None;
    for o in message.options() {
        let repeated = previous == Some(o.number);
        previous = Some(o.number);
        if !is_recognised(o.number, o.value, repeated) {
            return Some(o.number);
        }
    }
    None
}

/// The critical options Covey processes: the engine (Uri-*, Block1, Block2) or every
/// resource (Accept, and If-Match / If-None-Match on those that change state).
const PROCESSED_CRITICAL: [OptionNumber; 9] = [
    OptionNumber::IF_MATCH,
    OptionNumber::URI_HOST,
    OptionNumber::IF_NONE_MATCH,
    OptionNumber::URI_PORT,
    OptionNumber::URI_PATH,
    OptionNumber::URI_QUERY,
    OptionNumber::ACCEPT,
    OptionNumber::BLOCK2,
    OptionNumber::BLOCK1,
];

/// The options that ask for a forward proxy (RFC 7252 §5.10.2).
const PROXY_OPTIONS: [OptionNumber; 2] = [OptionNumber::PROXY_URI, OptionNumber::PROXY_SCHEME];

/// The options of a request the engine acts on, found in one pass over them.
pub(crate) struct RequestOptions<'a> {
    /// The first critical option not recognised (RFC 7252 §5.4.1), if any.
    pub unrecognised_critical: Option<OptionNumber>,
    /// A well-formed Proxy-Uri or Proxy-Scheme: the request is for a proxy.
    pub proxy: Option<OptionNumber>,
    /// The first Block1 option's value.
    pub block1: Option<&'a [u8]>,
    /// The first Block2 option's value.
    pub block2: Option<&'a [u8]>,
    /// The first Size1 option's value.
    pub size1: Option<&'a [u8]>,
    /// The first Observe option's value.
    pub observe: Option<&'a [u8]>,
}

impl<'a> RequestOptions<'a> {
    /// Finds them and checks every option's recognition in one pass.
    pub fn scan(message: &Message<'a>) -> RequestOptions<'a> {
        let mut found = RequestOptions {
            unrecognised_critical: None,
            proxy: None,
            block1: None,
            block2: None,
            size1: None,
            observe: None,
        };
        let mut previous = None;
        for o in message.options() {
            let number = o.number;
            let repeated = previous == Some(number);
            previous = Some(number);
            let slot = match number {
                OptionNumber::BLOCK1 => &mut found.block1,
                OptionNumber::BLOCK2 => &mut found.block2,
                OptionNumber::SIZE1 => &mut found.size1,
                OptionNumber::OBSERVE => &mut found.observe,
                _ => {
                    if PROXY_OPTIONS.contains(&number) && is_well_formed(number, o.value, repeated)
                    {
                        found.proxy.get_or_insert(number);
                    } else if found.unrecognised_critical.is_none()
                        && !is_recognised(number, o.value, repeated)
                    {
                        found.unrecognised_critical = Some(number);
                    }
                    continue;
                }
            };
            if slot.is_none() {
                *slot = Some(o.value);
            }
            if found.unrecognised_critical.is_none() && !is_recognised(number, o.value, repeated) {
                found.unrecognised_critical = Some(number);
            }
        }
        found
    }
}

/// Whether an option would be recognised: elective ones always are (they may be ignored);
/// a critical one must be processed, within its length bounds, and not a forbidden repeat.
fn is_recognised(number: OptionNumber, value: &[u8], repeated: bool) -> bool {
    if !number.is_critical() {
        return true;
    }
    PROCESSED_CRITICAL.contains(&number) && is_well_formed(number, value, repeated)
}

/// Whether a registered option is within its length bounds and not a forbidden repeat.
fn is_well_formed(number: OptionNumber, value: &[u8], repeated: bool) -> bool {
    match number.rule() {
        Some(d) => {
            (d.min_len as usize..=d.max_len as usize).contains(&value.len())
                && (d.repeatable || !repeated)
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elective_options_are_always_recognised_critical_ones_only_when_valid() {
        assert!(is_recognised(OptionNumber(65000), b"", false));
        assert!(!is_recognised(OptionNumber(65001), b"", false));
        assert!(!is_recognised(OptionNumber::URI_HOST, b"", false));
        assert!(is_recognised(OptionNumber::URI_HOST, b"example.org", false));
        assert!(!is_recognised(OptionNumber::URI_HOST, b"example.org", true));
        assert!(is_recognised(OptionNumber::URI_PATH, b"a", true));
    }

    #[test]
    fn registered_critical_options_covey_does_not_implement_are_unrecognised() {
        for number in [
            OptionNumber::OSCORE,
            OptionNumber::EDHOC,
            OptionNumber::Q_BLOCK1,
            OptionNumber::Q_BLOCK2,
            OptionNumber::PROXY_URI,
            OptionNumber::PROXY_SCHEME,
        ] {
            assert!(number.is_known(), "{number}");
            assert!(!is_recognised(number, b"", false), "{number}");
        }
        assert!(is_recognised(OptionNumber::IF_NONE_MATCH, b"", false));
    }
}
