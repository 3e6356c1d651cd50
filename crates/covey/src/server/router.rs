//! Routing requests by path to resources; 4.04 for unknown paths, 4.05 for unknown methods,
//! and `/.well-known/core` built from the resources' attributes. Paths match segment by
//! segment (the Uri-Path options), so one segment `a/b` is not the path `/a/b`.

use std::collections::HashMap;

use covey_core::{Code, OptionNumber};
use covey_proto::{NotificationType, Received};

use super::resource::Resource;
use super::well_known;
use crate::driver::{ResponseFuture, Service};
use crate::{Request, Response};

/// One routed path.
#[derive(Debug)]
struct Route {
    path: String,
    segments: Vec<String>,
    /// Also answers every path below this one.
    subtree: bool,
    resource: Resource,
}

/// A fixed set of resources by path.
#[derive(Debug)]
pub struct Router {
    routes: Vec<Route>,
    exact: HashMap<Vec<String>, usize>,
    links: String,
}

impl Router {
    /// A router over `(path, answers the subtree too, resource)`; later paths win.
    pub(crate) fn new(routes: Vec<(String, bool, Resource)>) -> Router {
        let mut deduplicated: Vec<Route> = Vec::with_capacity(routes.len());
        for (path, subtree, resource) in routes {
            let path = normalise(&path);
            // A later resource at the same path replaces the earlier one.
            deduplicated.retain(|r| r.path != path || r.subtree != subtree);
            deduplicated.push(Route {
                segments: segments(&path),
                path,
                subtree,
                resource,
            });
        }
        let routes = deduplicated;
        let exact = routes
            .iter()
            .enumerate()
            .map(|(i, r)| (r.segments.clone(), i))
            .collect();
        let visible = routes
            .iter()
            .filter(|r| !r.resource.hidden)
            .map(|r| (r.path.as_str(), &r.resource.attributes));
        let links = well_known::document(visible).unwrap_or_else(|e| {
            tracing::warn!("resource attributes cannot be listed: {e}");
            String::new()
        });
        Router {
            routes,
            exact,
            links,
        }
    }

    /// Appends link-format entries of resources served elsewhere (by Apps).
    pub(crate) fn add_links(&mut self, extra: &[String]) {
        for link in extra {
            if !self.links.is_empty() {
                self.links.push(',');
            }
            self.links.push_str(link);
        }
    }

    /// The `/.well-known/core` document (unfiltered).
    pub fn links(&self) -> &str {
        &self.links
    }

    /// The resource answering the path of `segments`.
    fn find(&self, segments: &[String]) -> Option<&Resource> {
        self.find_index(segments).map(|i| &self.routes[i].resource)
    }

    /// The index of the route answering the path of `segments`.
    fn find_index(&self, segments: &[String]) -> Option<usize> {
        if let Some(&i) = self.exact.get(segments) {
            return Some(i);
        }
        self.routes
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.subtree && segments.len() > r.segments.len() && segments.starts_with(&r.segments)
            })
            .max_by_key(|(_, r)| r.segments.len())
            .map(|(i, _)| i)
    }

    /// The observable resource at `path`: its engine key and how its notifications are sent.
    pub(crate) fn observable(&self, path: &str) -> Option<(u64, NotificationType)> {
        let i = self.find_index(&segments(path))?;
        let resource = &self.routes[i].resource;
        resource
            .attributes
            .observable
            .then_some((i as u64, resource.notifications))
    }

    /// The observable resource at `path` (its engine key, notification type) and its GET
    /// handler.
    pub(crate) fn observable_get(
        &self,
        path: &str,
    ) -> Option<(u64, NotificationType, super::Handler)> {
        let (key, kind) = self.observable(path)?;
        let handler = self.routes[key as usize]
            .resource
            .handler_for(Code::GET)?
            .clone();
        Some((key, kind, handler))
    }
}

impl Service for Router {
    fn accepts(&self, request: &Received<'_>) -> bool {
        // Compared as bytes, so the requests the Apps serve cost no copy here.
        let path = || request.message.options_of(OptionNumber::URI_PATH);
        let is_well_known = path().eq([".well-known", "core"].map(str::as_bytes));
        is_well_known
            || self.routes.iter().any(|r| {
                let mut segments = path();
                r.segments
                    .iter()
                    .all(|s| segments.next() == Some(s.as_bytes()))
                    // A subtree answers its own path too.
                    && (r.subtree || segments.next().is_none())
            })
    }

    fn observable(&self, request: &Request) -> Option<u64> {
        if !matches!(request.method, Code::GET | Code::FETCH) {
            return None;
        }
        let i = self.find_index(&request.path_segments())?;
        let attributes = &self.routes[i].resource.attributes;
        // Every observer gets the same notification, in the first format the resource
        // lists: one asking another is answered once, without being registered (RFC 7641
        // §4.1 lets a server decline), rather than notified in a format it did not accept.
        let notified_format = attributes.content_formats.first().copied();
        let accepts_notifications = match (request.accept(), notified_format) {
            (Some(asked), Some(notified)) => asked.0 == notified,
            _ => true,
        };
        (attributes.observable && accepts_notifications).then_some(i as u64)
    }

    fn call(&self, request: Request) -> ResponseFuture {
        let path = request.path_segments();
        let response = if is_well_known_core(&path) {
            well_known::respond(&request, &self.links)
        } else {
            match self.find(&path) {
                Some(resource) => match resource.handler_for(request.method) {
                    Some(handler) => return handler(request),
                    None => Response::new(Code::METHOD_NOT_ALLOWED),
                },
                None => Response::new(Code::NOT_FOUND),
            }
        };
        Box::pin(std::future::ready(response))
    }
}

/// `/a/b` form: one leading slash, no trailing one (except the root `/`).
fn normalise(path: &str) -> String {
    let trimmed = path.trim_matches('/');
    format!("/{trimmed}")
}

/// The segments of a `/a/b` path as registered or notified (no segment contains `/`).
fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn is_well_known_core(segments: &[String]) -> bool {
    segments.len() == 2 && segments[0] == ".well-known" && segments[1] == "core"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_then_longest_subtree() {
        let r = Router::new(vec![
            ("/a".into(), true, Resource::new().title("a")),
            ("a/b/".into(), true, Resource::new().title("ab")),
            ("/c".into(), false, Resource::new().hidden()),
        ]);
        let title = |p: &str| {
            r.find(&segments(p))
                .and_then(|res| res.attributes.title.clone())
        };
        assert_eq!(title("/a").as_deref(), Some("a"));
        assert_eq!(title("/a/x").as_deref(), Some("a"));
        assert_eq!(title("/a/b/c").as_deref(), Some("ab"));
        assert_eq!(title("/ab"), None);
        assert!(r.find(&segments("/c")).is_some() && r.find(&segments("/c/d")).is_none());
        assert_eq!(r.links(), r#"</a>;title="a",</a/b>;title="ab""#);
    }

    #[test]
    fn a_segment_with_a_slash_is_not_two_segments() {
        let r = Router::new(vec![
            ("/sensors/temp".into(), false, Resource::new().title("t")),
            ("/tree".into(), true, Resource::new().title("tree")),
        ]);
        let one = |s: &str| vec![s.to_string()];
        assert!(r.find(&one("sensors/temp")).is_none());
        assert!(r.find(&segments("/sensors/temp")).is_some());
        assert!(r.find(&["tree".into(), "a/b".into()]).is_some());
        assert!(r.find(&one("tree/a")).is_none());
        assert!(!is_well_known_core(&one(".well-known/core")));
    }
}
