//! Link-format listings: `GET /e` (entities with `rt="core.entity"` and `ect`) and
//! `/.well-known/core` (`/e` and every entity), both filtered by query (RFC 6690 §4.1).

use crate::entity::Entity;
use covey_core::link_format::{filter_links, LinkWriter, QueryFilter};

/// The media types an entity answers in, for the `ct` attribute.
const ENTITY_CT: &str = "0 50 60 110 112";

/// The links of `entities`, preceded by `/e` itself when `with_root`, filtered by the
/// query arguments `filters`. An invalid filter is an error naming it.
pub fn links<'a>(
    entities: impl Iterator<Item = &'a Entity>,
    with_root: bool,
    filters: &[String],
) -> Result<String, String> {
    let mut w = LinkWriter::new(String::new());
    if with_root {
        let _ = w
            .link("/e")
            .and_then(|l| l.attr_quoted("rt", "core.em"))
            .and_then(|l| l.attr_u32("ct", 40));
    }
    for e in entities {
        let target = format!("/e/{}", e.name);
        let _ = w
            .link(&target)
            .and_then(|l| l.attr_quoted("rt", "core.entity"))
            .and_then(|l| l.attr_token("ect", e.profile.ect.name()))
            .and_then(|l| l.attr_quoted("ct", ENTITY_CT));
    }
    let text = w.into_inner();
    if filters.is_empty() {
        return Ok(text);
    }
    let parsed = filters
        .iter()
        .map(|f| QueryFilter::parse(f).map_err(|e| format!("query filter \"{f}\": {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = String::new();
    filter_links(&text, &parsed, &mut out).map_err(|e| format!("link filter: {e}"))?;
    Ok(out)
}
