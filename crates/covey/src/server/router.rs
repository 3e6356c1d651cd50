//! Routing requests by path to resources; 4.04 for unknown paths, 4.05 for unknown methods,
//! and `/.well-known/core` built from the resources' attributes.

use std::collections::HashMap;

use covey_core::Code;
use covey_proto::NotificationType;

use super::resource::Resource;
use super::well_known::{self, WELL_KNOWN_CORE};
use crate::driver::{ResponseFuture, Service};
use crate::{Request, Response};

/// One routed path.
#[derive(Debug)]
struct Route {
    path: String,
    /// Also answers every path below this one.
    subtree: bool,
    resource: Resource,
}

/// A fixed set of resources by path.
#[derive(Debug)]
pub struct Router {
    routes: Vec<Route>,
    exact: HashMap<String, usize>,
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
                path,
                subtree,
                resource,
            });
        }
        let routes = deduplicated;
        let exact = routes
            .iter()
            .enumerate()
            .map(|(i, r)| (r.path.clone(), i))
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

    /// The resource answering `path`.
    fn find(&self, path: &str) -> Option<&Resource> {
        self.find_index(path).map(|i| &self.routes[i].resource)
    }

    /// The index of the route answering `path`.
    fn find_index(&self, path: &str) -> Option<usize> {
        if let Some(&i) = self.exact.get(path) {
            return Some(i);
        }
        self.routes
            .iter()
            .enumerate()
            .filter(|(_, r)| r.subtree && is_below(path, &r.path))
            .max_by_key(|(_, r)| r.path.len())
            .map(|(i, _)| i)
    }

    /// The observable resource at `path`: its engine key and how its notifications are sent.
    pub(crate) fn observable(&self, path: &str) -> Option<(u64, NotificationType)> {
        let i = self.find_index(&normalise(path))?;
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
    fn accepts(&self, request: &Request) -> bool {
        let path = request.path();
        path == WELL_KNOWN_CORE || self.find(&path).is_some()
    }

    fn observable(&self, request: &Request) -> Option<u64> {
        if !matches!(request.method, Code::GET | Code::FETCH) {
            return None;
        }
        let i = self.find_index(&request.path())?;
        self.routes[i]
            .resource
            .attributes
            .observable
            .then_some(i as u64)
    }

    fn call(&self, request: Request) -> ResponseFuture {
        let path = request.path();
        let response = if path == WELL_KNOWN_CORE {
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

fn is_below(path: &str, prefix: &str) -> bool {
    prefix == "/"
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
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
        let title = |p: &str| r.find(p).and_then(|res| res.attributes.title.clone());
        assert_eq!(title("/a").as_deref(), Some("a"));
        assert_eq!(title("/a/x").as_deref(), Some("a"));
        assert_eq!(title("/a/b/c").as_deref(), Some("ab"));
        assert_eq!(title("/ab"), None);
        assert!(r.find("/c").is_some() && r.find("/c/d").is_none());
        assert_eq!(r.links(), r#"</a>;title="a",</a/b>;title="ab""#);
    }
}
