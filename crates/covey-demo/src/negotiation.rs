//! Content negotiation of the demo resources (RFC 7252 §5.10.4): the Accept option picks one
//! of the formats a resource offers, anything else is 4.06 Not Acceptable.

use covey_core::{Code, ContentFormat};
use covey_proto::{AppContext, IncomingId};

use super::reply;

/// The format to answer in: `accept` if offered, else the first offered; `None` when
/// Accept asks for a format not offered.
pub fn choose(accept: Option<ContentFormat>, offered: &[ContentFormat]) -> Option<ContentFormat> {
    match accept {
        None => offered.first().copied(),
        Some(asked) => offered.contains(&asked).then_some(asked),
    }
}

/// Answers `id` with 4.06 naming the `offered` formats.
pub fn refuse(cx: &mut AppContext<'_>, id: IncomingId, offered: &[ContentFormat]) {
    let names: Vec<String> = offered.iter().map(|f| f.to_string()).collect();
    let text = format!("offered: {}", names.join(", "));
    reply::content(
        cx,
        id,
        None,
        Code::NOT_ACCEPTABLE,
        Some(ContentFormat::TEXT_PLAIN),
        &[],
        text.as_bytes(),
    );
}
