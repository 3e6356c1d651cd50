//! Conditional requests (RFC 7252 §5.10.8): whether a request's If-Match and If-None-Match
//! hold for the current state of its target resource, one rule for every resource that
//! changes state.

use crate::{Message, OptionNumber};

/// The target resource as a conditional request finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Current<'a> {
    /// No current representation (not created yet, or deleted).
    Absent,
    /// A current representation, with its ETag when the resource gives one.
    Present(Option<&'a [u8]>),
}

/// A request's conditions: its If-Match values and whether it has If-None-Match.
#[derive(Debug, Clone, Copy)]
pub struct Preconditions<'m, 'a> {
    message: &'m Message<'a>,
}

impl<'m, 'a> Preconditions<'m, 'a> {
    /// The conditions of `message`.
    pub fn of(message: &'m Message<'a>) -> Preconditions<'m, 'a> {
        Preconditions { message }
    }

    /// Whether they hold for `current`; when not, the answer is 4.12 Precondition Failed.
    pub fn hold(&self, current: Current<'_>) -> bool {
        preconditions_hold(
            self.message.options_of(OptionNumber::IF_MATCH),
            self.message.has_option(OptionNumber::IF_NONE_MATCH),
            current,
        )
    }
}

/// Whether If-Match `if_match` (each an ETag, or empty for "any") and If-None-Match hold
/// for `current`: If-Match needs a current representation whose ETag is listed (an empty
/// value matches any); If-None-Match needs none.
pub fn preconditions_hold<'v>(
    if_match: impl IntoIterator<Item = &'v [u8]>,
    if_none_match: bool,
    current: Current<'_>,
) -> bool {
    let mut if_match = if_match.into_iter().peekable();
    let matched = match (if_match.peek().is_some(), current) {
        (false, _) => true,
        (true, Current::Absent) => false,
        (true, Current::Present(etag)) => if_match.any(|v| v.is_empty() || Some(v) == etag),
    };
    matched && !(if_none_match && current != Current::Absent)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAG: &[u8] = &[1, 2];

    #[test]
    fn if_match_needs_the_current_etag_or_an_empty_value() {
        let present = Current::Present(Some(TAG));
        assert!(preconditions_hold([TAG], false, present));
        assert!(preconditions_hold([&[9u8][..], TAG], false, present));
        assert!(!preconditions_hold([&[9u8][..]], false, present));
        assert!(preconditions_hold([&[][..]], false, present));
        assert!(preconditions_hold([&[][..]], false, Current::Present(None)));
        assert!(!preconditions_hold([TAG], false, Current::Present(None)));
        assert!(!preconditions_hold([&[][..]], false, Current::Absent));
    }

    #[test]
    fn if_none_match_needs_no_current_representation() {
        assert!(preconditions_hold([], true, Current::Absent));
        assert!(!preconditions_hold([], true, Current::Present(None)));
        assert!(preconditions_hold([], false, Current::Present(None)));
        assert!(preconditions_hold([], false, Current::Absent));
    }

    #[test]
    fn reads_the_conditions_of_a_message() {
        let mut buf = [0u8; 32];
        let mut enc = crate::MessageEncoder::new(
            &mut buf,
            crate::MessageType::Confirmable,
            crate::Code::PUT,
            1,
            &[],
        )
        .unwrap();
        enc.option(OptionNumber::IF_MATCH, TAG).unwrap();
        let n = enc.finish();
        let m = Message::parse(&buf[..n]).unwrap();
        let p = Preconditions::of(&m);
        assert!(p.hold(Current::Present(Some(TAG))));
        assert!(!p.hold(Current::Present(Some(&[3]))));
        assert!(!p.hold(Current::Absent));
    }
}
