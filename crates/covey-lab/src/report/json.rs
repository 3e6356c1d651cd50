//! JSON documents of results.

use std::path::Path;

use serde::Serialize;

use crate::LabError;

/// Writes `value` as pretty-printed JSON to `path`.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), LabError> {
    let text = serde_json::to_string_pretty(value)?;
    super::write_text(path, &text)
}
