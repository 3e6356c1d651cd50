//! `/.well-known/core` (RFC 6690 §4): the links of every visible resource, filtered by the
//! request's query with `covey_core::link_format`.

use covey_core::link_format::{filter_links, LinkWriter, QueryFilter, WriteError};
use covey_core::{Code, ContentFormat};

use super::resource::Attributes;
use crate::{Request, Response};

/// The path of the discovery resource.
pub const WELL_KNOWN_CORE: &str = "/.well-known/core";

/// Writes the link-format document for `resources` (path, attributes).
pub(crate) fn document<'a>(
    resources: impl Iterator<Item = (&'a str, &'a Attributes)>,
) -> Result<String, WriteError> {
    let mut w = LinkWriter::new(String::new());
    for (path, a) in resources {
        w.link(path)?;
        if !a.resource_types.is_empty() {
            w.attr_quoted("rt", &a.resource_types.join(" "))?;
        }
        if !a.interfaces.is_empty() {
            w.attr_quoted("if", &a.interfaces.join(" "))?;
        }
        match a.content_formats.as_slice() {
            [] => {}
            [one] => {
                w.attr_u32("ct", u32::from(*one))?;
            }
            many => {
                let list: Vec<String> = many.iter().map(u16::to_string).collect();
                w.attr_quoted("ct", &list.join(" "))?;
            }
        }
        if let Some(sz) = a.size {
            w.attr_u32("sz", sz)?;
        }
        if a.observable {
            w.attr("obs")?;
        }
        if let Some(title) = &a.title {
            w.attr_quoted("title", title)?;
        }
    }
    Ok(w.into_inner())
}

/// Answers a request to `/.well-known/core` from the full document.
pub(crate) fn respond(request: &Request, links: &str) -> Response {
    if request.method != Code::GET {
        return Response::new(Code::METHOD_NOT_ALLOWED);
    }
    let queries: Vec<String> = request.options.queries().collect();
    let mut filters = Vec::with_capacity(queries.len());
    for q in &queries {
        match QueryFilter::parse(q) {
            Ok(f) => filters.push(f),
            Err(e) => return Response::error(Code::BAD_REQUEST, format!("bad filter {q:?}: {e}")),
        }
    }
    let mut out = String::new();
    if let Err(e) = filter_links(links, &filters, &mut out) {
        return Response::error(Code::INTERNAL_SERVER_ERROR, e.to_string());
    }
    // A filter that matches nothing is still 2.05, with an empty document (RFC 6690 §4.1).
    Response::content(ContentFormat::LINK_FORMAT, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_serialise_as_rfc_6690() {
        let temp = Attributes {
            resource_types: vec!["temperature-c".into()],
            interfaces: vec!["sensor".into()],
            content_formats: vec![0],
            observable: true,
            ..Default::default()
        };
        let multi = Attributes {
            content_formats: vec![0, 41],
            size: Some(2048),
            title: Some("big \"one\"".into()),
            ..Default::default()
        };
        let doc = document([("/sensors/temp", &temp), ("/large", &multi)].into_iter()).unwrap();
        assert_eq!(
            doc,
            r#"</sensors/temp>;rt="temperature-c";if="sensor";ct=0;obs,</large>;ct="0 41";sz=2048;title="big \"one\"""#
        );
    }
}
