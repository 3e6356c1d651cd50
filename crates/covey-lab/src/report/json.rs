//! JSON documents of results.

use std::path::Path;

use serde::Serialize;

use crate::LabError;

/// Writes `value` as pretty-printed JSON to `path`.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), LabError> {
    let text = serde_json::to_string_pretty(value)?;
    super::write_text(path, &text)
}

/// Serialises a duration as seconds (a float), as every result document gives times.
pub fn serialize_secs<S: serde::Serializer>(
    d: &covey_proto::Duration,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}
