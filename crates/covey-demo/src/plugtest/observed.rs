//! `/obs` and `/obs-non`: the time, until a client PUTs something else; observers hear of
//! every periodic change, PUT (new state, or 4.06 when the format changed) and DELETE (4.04).

use covey_core::{uint, Code, ContentFormat, OptionNumber};
use covey_proto::{opt, AppContext, IncomingId, NotificationType, Response};

use super::super::reply;
use super::Stored;

/// One observable plugtest resource.
#[derive(Debug)]
pub struct Observed {
    /// The engine's observe key.
    key: u64,
    kind: NotificationType,
    /// What a client PUT; the time when `None`.
    stored: Option<Stored>,
}

impl Observed {
    /// A resource observed under `key`, notified with messages of `kind`.
    pub fn new(key: u64, kind: NotificationType) -> Observed {
        Observed {
            key,
            kind,
            stored: None,
        }
    }

    fn format(&self) -> ContentFormat {
        self.stored
            .as_ref()
            .and_then(|s| s.format)
            .unwrap_or(ContentFormat::TEXT_PLAIN)
    }

    /// Calls `f` with the current representation: the stored one or the time `now_text`,
    /// fresh for `max_age` seconds.
    fn with_representation(&self, now_text: &str, max_age: u32, f: impl FnOnce(&Response<'_>)) {
        let (format, payload) = match &self.stored {
            Some(s) => (s.format, s.payload.as_slice()),
            None => (Some(ContentFormat::TEXT_PLAIN), now_text.as_bytes()),
        };
        let (mut cf, mut age) = ([0u8; 4], [0u8; 4]);
        let max_age = opt(OptionNumber::MAX_AGE, uint::encode(max_age, &mut age));
        let with_format;
        let options: &[_] = match format {
            Some(format) => {
                with_format = [format.option(&mut cf), max_age];
                &with_format
            }
            None => std::slice::from_ref(&max_age),
        };
        f(&Response {
            code: Code::CONTENT,
            options,
            payload,
        });
    }

    /// GET: the representation; observers are registered when they accept text, the
    /// format the resource lists (a client asking another is answered once).
    pub fn get(
        &self,
        cx: &mut AppContext<'_>,
        id: IncomingId,
        accept: Option<ContentFormat>,
        now_text: &str,
        max_age: u32,
    ) {
        let format = self.format();
        if accept.is_some_and(|a| a != format) {
            return super::super::negotiation::refuse(cx, id, &[format]);
        }
        let observed = accept
            .is_none_or(|a| a == ContentFormat::TEXT_PLAIN)
            .then_some(self.key);
        self.with_representation(now_text, max_age, |r| {
            reply::send(cx, id, observed, r);
        });
    }

    /// PUT: stores the payload and tells the observers; a changed format ends their
    /// observations with 4.06, since they asked for the old one.
    pub fn put(
        &mut self,
        cx: &mut AppContext<'_>,
        id: IncomingId,
        format: Option<ContentFormat>,
        payload: &[u8],
        now_text: &str,
        max_age: u32,
    ) {
        let Some(format) = format else {
            return reply::error(cx, id, Code::BAD_REQUEST, "Content-Format not set");
        };
        let format_changed = format != self.format();
        let stored = self.stored.get_or_insert_with(Stored::default);
        stored.set(payload, Some(format));
        reply::content(cx, id, None, Code::CHANGED, None, &[], &[]);
        if format_changed {
            self.end_observations(cx, Code::NOT_ACCEPTABLE);
        }
        self.notify(cx, now_text, max_age);
    }

    /// DELETE: observers learn the resource is gone (4.04) and are removed; it then starts
    /// over with the time.
    pub fn delete(&mut self, cx: &mut AppContext<'_>, id: IncomingId) {
        self.stored = None;
        reply::content(cx, id, None, Code::DELETED, None, &[], &[]);
        self.end_observations(cx, Code::NOT_FOUND);
    }

    /// Sends the current representation to every observer.
    pub fn notify(&self, cx: &mut AppContext<'_>, now_text: &str, max_age: u32) {
        self.with_representation(now_text, max_age, |r| {
            cx.endpoint.notify_as(cx.now, self.key, r, self.kind);
        });
    }

    /// Ends every observation with error `code` (RFC 7641 §4.2).
    fn end_observations(&self, cx: &mut AppContext<'_>, code: Code) {
        cx.endpoint
            .notify_as(cx.now, self.key, &Response::new(code), self.kind);
    }
}
