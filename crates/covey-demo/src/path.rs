//! Matching a request's path segment by segment (the Uri-Path options), without building
//! strings: one segment `a/b` is not the path `/a/b`.

use covey_core::OptionNumber;
use covey_proto::Received;

/// Whether `request`'s path is exactly `segments`.
pub fn is(request: &Received<'_>, segments: &[&str]) -> bool {
    let mut path = request.message.options_of(OptionNumber::URI_PATH);
    segments.iter().all(|s| path.next() == Some(s.as_bytes())) && path.next().is_none()
}

/// Whether `request`'s path is `prefix` or lies below it.
pub fn starts_with(request: &Received<'_>, prefix: &[&str]) -> bool {
    let mut path = request.message.options_of(OptionNumber::URI_PATH);
    prefix.iter().all(|s| path.next() == Some(s.as_bytes()))
}
