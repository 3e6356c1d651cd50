//! Content negotiation of the demo resources (RFC 7252 §5.10.4): the Accept option picks one
//! of the formats a resource offers, anything else is 4.06 Not Acceptable.

use covey::{Code, ContentFormat, Request, Response};

/// The format to answer `request` in: its Accept if offered, else the first offered; a
/// 4.06 naming the offered formats when Accept asks for another.
pub fn choose(request: &Request, offered: &[ContentFormat]) -> Result<ContentFormat, Response> {
    let Some(asked) = request.accept() else {
        return Ok(offered[0]);
    };
    if offered.contains(&asked) {
        return Ok(asked);
    }
    let names: Vec<String> = offered.iter().map(|f| f.to_string()).collect();
    Err(Response::new(Code::NOT_ACCEPTABLE)
        .with_payload(format!("offered: {}", names.join(", ")).into_bytes())
        .with_content_format(ContentFormat::TEXT_PLAIN))
}
