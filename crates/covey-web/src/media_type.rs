//! HTTP media types ↔ CoAP Content-Formats (RFC 8075 §6.1).

use covey_core::ContentFormat;

/// The Content-Format of an HTTP `Content-Type`: `Ok(None)` when there is none, `Err` with
/// the media type when CoAP has no number for it (the proxy answers 415).
pub fn content_format(content_type: Option<&str>) -> Result<Option<ContentFormat>, String> {
    let Some(value) = content_type.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    lookup(value).map(Some).ok_or_else(|| value.to_string())
}

/// The first media type of an HTTP `Accept` that has a Content-Format; wildcards and
/// unknown types add nothing.
pub fn accept(header: Option<&str>) -> Option<ContentFormat> {
    header?
        .split(',')
        .map(|part| part.split(";q=").next().unwrap_or("").trim())
        .filter(|t| !t.contains('*'))
        .find_map(lookup)
}

/// The HTTP `Content-Type` for a CoAP payload: the registered media type, else
/// `application/octet-stream` (RFC 8075 §6.1: no or unknown format is opaque data).
pub fn content_type(format: Option<ContentFormat>) -> &'static str {
    format
        .and_then(ContentFormat::media_type)
        .unwrap_or("application/octet-stream")
}

/// A media type, parameters included, as a Content-Format. `text/plain` without a charset
/// is taken as UTF-8, as browsers and curl send it.
fn lookup(media_type: &str) -> Option<ContentFormat> {
    let normalised: String = media_type
        .split(';')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(";")
        .to_ascii_lowercase();
    if normalised == "text/plain" {
        return Some(ContentFormat::TEXT_PLAIN);
    }
    covey_core::content_format::CONTENT_FORMATS
        .iter()
        .find(|(_, m)| m.eq_ignore_ascii_case(&normalised))
        .map(|(cf, _)| *cf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_and_formats_map_both_ways() {
        assert_eq!(
            content_format(Some("application/json")),
            Ok(Some(ContentFormat::JSON))
        );
        assert_eq!(
            content_format(Some("text/plain; charset=utf-8")),
            Ok(Some(ContentFormat::TEXT_PLAIN))
        );
        assert_eq!(
            content_format(Some("Application/CBOR")),
            Ok(Some(ContentFormat::CBOR))
        );
        assert_eq!(content_format(None), Ok(None));
        assert_eq!(
            content_format(Some("image/png")),
            Err("image/png".to_string())
        );
        assert_eq!(
            content_type(Some(ContentFormat::SENML_JSON)),
            "application/senml+json"
        );
        assert_eq!(
            content_type(Some(ContentFormat(65000))),
            "application/octet-stream"
        );
        assert_eq!(content_type(None), "application/octet-stream");
    }

    #[test]
    fn accept_takes_the_first_known_type() {
        assert_eq!(
            accept(Some("image/png, application/senml+cbor;q=0.9, */*")),
            Some(ContentFormat::SENML_CBOR)
        );
        assert_eq!(accept(Some("*/*")), None);
        assert_eq!(accept(None), None);
    }
}
