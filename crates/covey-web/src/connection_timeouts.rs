//! Time limits on an HTTP connection that carries no request: a client that opened a
//! connection and sends nothing, or sends a request's head slowly (slowloris), would
//! otherwise hold one of the connections served at once for as long as it likes. A
//! connection with no request in progress is closed after the idle timeout, and once the
//! head of a request has started it must be complete within the header timeout. A request
//! in progress (a proxied exchange, an observation) has no limit here.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::connect_info::{ConnectInfo, Connected};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use axum::serve::{IncomingStream, Listener};
use http_body::{Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// The time limits of a connection with no request in progress.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionTimeouts {
    /// From the first byte of a request's head to its end.
    pub header: Duration,
    /// With nothing received since the last request ended (or the connection opened).
    pub idle: Duration,
}

/// Where a connection stands, shared by its socket and its requests.
#[derive(Debug)]
struct State {
    /// Requests being answered (their response bodies not yet sent).
    in_flight: usize,
    /// When the last request ended, or the connection opened.
    idle_since: Instant,
    /// When the first byte of the next request arrived.
    head_started: Option<Instant>,
    /// The reader to wake when the last request ends, so its clock starts.
    reader: Option<Waker>,
}

/// What a connection is doing; request handlers reach it through `ConnectInfo`.
#[derive(Debug, Clone)]
pub struct ConnectionActivity(Arc<Mutex<State>>);

impl ConnectionActivity {
    fn new() -> ConnectionActivity {
        ConnectionActivity(Arc::new(Mutex::new(State {
            in_flight: 0,
            idle_since: Instant::now(),
            head_started: None,
            reader: None,
        })))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// When the connection is to be closed, unless a request is in progress.
    fn deadline(&self, timeouts: ConnectionTimeouts) -> Option<Instant> {
        let s = self.state();
        match (s.in_flight, s.head_started) {
            (0, Some(started)) => Some(started + timeouts.header),
            (0, None) => Some(s.idle_since + timeouts.idle),
            _ => None,
        }
    }

    /// Bytes arrived: between requests, they start the next request's head.
    fn received(&self) {
        let mut s = self.state();
        if s.in_flight == 0 && s.head_started.is_none() {
            s.head_started = Some(Instant::now());
        }
    }

    /// A request's head is complete and its handler runs until the returned guard drops.
    fn begin(&self) -> RequestInProgress {
        let mut s = self.state();
        s.in_flight += 1;
        s.head_started = None;
        RequestInProgress(self.clone())
    }
}

/// A request in progress on its connection; dropped with its response body.
struct RequestInProgress(ConnectionActivity);

impl Drop for RequestInProgress {
    fn drop(&mut self) {
        let mut s = self.0.state();
        s.in_flight = s.in_flight.saturating_sub(1);
        if s.in_flight == 0 {
            s.idle_since = Instant::now();
            s.head_started = None;
            if let Some(reader) = s.reader.take() {
                reader.wake();
            }
        }
    }
}

impl<L> Connected<IncomingStream<'_, TimedListener<L>>> for ConnectionActivity
where
    L: Listener,
{
    fn connect_info(stream: IncomingStream<'_, TimedListener<L>>) -> ConnectionActivity {
        stream.io().activity.clone()
    }
}

/// Middleware: marks a request in progress on its connection until its response is sent.
pub async fn track_requests(request: Request, next: Next) -> Response {
    let Some(ConnectInfo(activity)) = request
        .extensions()
        .get::<ConnectInfo<ConnectionActivity>>()
        .cloned()
    else {
        return next.run(request).await;
    };
    let in_progress = activity.begin();
    let response = next.run(request).await;
    response.map(|body| {
        Body::new(TrackedBody {
            body,
            _in_progress: in_progress,
        })
    })
}

/// A response body that keeps its request in progress until it is sent (or dropped).
struct TrackedBody {
    body: Body,
    _in_progress: RequestInProgress,
}

impl HttpBody for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A listener whose connections close when they carry no request for too long.
pub struct TimedListener<L> {
    inner: L,
    timeouts: ConnectionTimeouts,
}

impl<L: Listener> TimedListener<L> {
    /// Applies `timeouts` to the connections of `inner`.
    pub fn new(inner: L, timeouts: ConnectionTimeouts) -> TimedListener<L> {
        TimedListener { inner, timeouts }
    }
}

impl<L: Listener> Listener for TimedListener<L> {
    type Io = Timed<L::Io>;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (io, addr) = self.inner.accept().await;
        let activity = ConnectionActivity::new();
        let timer = Box::pin(tokio::time::sleep(self.timeouts.idle));
        let io = Timed {
            io,
            activity,
            timeouts: self.timeouts,
            timer,
        };
        (io, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A connection that fails its reads once it has carried no request for too long, which
/// makes the HTTP server close it.
pub struct Timed<T> {
    io: T,
    activity: ConnectionActivity,
    timeouts: ConnectionTimeouts,
    timer: Pin<Box<Sleep>>,
}

impl<T> Timed<T> {
    /// `Ready` with an error once the connection's time is up; else arms the timer.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        loop {
            let Some(deadline) = self.activity.deadline(self.timeouts) else {
                // A request is in progress: its end wakes this reader.
                self.activity.state().reader = Some(cx.waker().clone());
                return Poll::Pending;
            };
            if Instant::now() >= deadline {
                let why = match self.activity.state().head_started {
                    Some(_) => "the request head took longer than --http-header-timeout",
                    None => "idle for longer than --http-idle-timeout",
                };
                tracing::debug!("HTTP connection closed: {why}");
                return Poll::Ready(io::Error::new(io::ErrorKind::TimedOut, why));
            }
            if self.timer.deadline() != deadline {
                self.timer.as_mut().reset(deadline);
            }
            if self.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Timed<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.activity.received();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.poll_deadline(cx).map(Err),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Timed<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: ConnectionTimeouts = ConnectionTimeouts {
        header: Duration::from_secs(2),
        idle: Duration::from_secs(30),
    };

    #[test]
    fn the_clock_runs_only_while_no_request_is_in_progress() {
        let activity = ConnectionActivity::new();
        let left = |a: &ConnectionActivity| {
            a.deadline(LIMITS)
                .map(|d| d.saturating_duration_since(Instant::now()))
        };
        assert!(left(&activity).is_some_and(|d| d > Duration::from_secs(29)));
        activity.received();
        assert!(left(&activity).is_some_and(|d| d <= LIMITS.header));
        let request = activity.begin();
        assert_eq!(left(&activity), None);
        activity.received();
        assert_eq!(left(&activity), None);
        drop(request);
        assert!(left(&activity).is_some_and(|d| d > Duration::from_secs(29)));
    }
}
