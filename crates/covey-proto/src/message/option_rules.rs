//! Which options the engine recognises (RFC 7252 §5.4.1, §5.4.5), for requests and
//! responses alike: an elective option always is (it may be ignored); a critical one must be
//! in the registry, within its length bounds, and not a forbidden repeat. Whether a number is
//! critical, unsafe or NoCacheKey is covey-core's option registry's to say.

use covey_core::{Message, OptionNumber};

/// The first critical option the engine and registry do not recognise: an unknown number,
/// a known one outside its length bounds, or a repeat of a non-repeatable one
/// (RFC 7252 §5.4.1, §5.4.5).
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

/// The options of a request the engine acts on, found in one pass over them.
pub(crate) struct RequestOptions<'a> {
    /// The first critical option not recognised (RFC 7252 §5.4.1), if any.
    pub unrecognised_critical: Option<OptionNumber>,
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
                    if found.unrecognised_critical.is_none()
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
/// a critical one must be known, within its length bounds, and not a forbidden repeat.
fn is_recognised(number: OptionNumber, value: &[u8], repeated: bool) -> bool {
    if !number.is_critical() {
        return true;
    }
    match number.definition() {
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
}
