//! A bound on the HTTP connections served at once: the listener accepts a connection only
//! with a permit, which the connection holds until it closes, so further clients wait in
//! the kernel's listen backlog instead of each costing the gateway a task and buffers.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::serve::Listener;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A listener that serves at most a fixed number of connections at once.
pub struct LimitedListener<L> {
    inner: L,
    permits: Arc<Semaphore>,
}

impl<L: Listener> LimitedListener<L> {
    /// Serves at most `max` connections of `inner` at once (at least one).
    pub fn new(inner: L, max: usize) -> LimitedListener<L> {
        LimitedListener {
            inner,
            permits: Arc::new(Semaphore::new(max.max(1))),
        }
    }
}

impl<L: Listener> Listener for LimitedListener<L> {
    type Io = Limited<L::Io>;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        // The semaphore is never closed, so this only waits for a connection to end.
        let permit = self.permits.clone().acquire_owned().await.ok();
        let (io, addr) = self.inner.accept().await;
        (
            Limited {
                io,
                _permit: permit,
            },
            addr,
        )
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A connection holding its permit.
pub struct Limited<T> {
    io: T,
    _permit: Option<OwnedSemaphorePermit>,
}

impl<T: AsyncRead + Unpin> AsyncRead for Limited<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Limited<T> {
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
