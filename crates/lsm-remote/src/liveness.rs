//! The link's liveness rule, the same on both sides: each side pings every `PING_EVERY`, and a
//! side that has received no byte at all for `SILENCE_LIMIT` drops the link. Bytes, not
//! messages: a screenshot that takes seconds to cross a slow link keeps it alive while its bytes
//! arrive, and a cut (traffic dropped, nothing closed) is noticed within `SILENCE_LIMIT` of the
//! last byte, that is within `SILENCE_LIMIT` of the cut.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// How often each side pings.
pub const PING_EVERY: Duration = Duration::from_millis(500);
/// How long a link may stay silent (no byte received) before it is dropped. Five ping periods:
/// a peer whose runtime stalls for up to 2 s is not dropped, a cut is noticed within 2.5 s.
pub const SILENCE_LIMIT: Duration = Duration::from_millis(2500);
/// A send that does not finish within this is a dead link (a slow one still finishes a
/// screenshot well within it; a cut is noticed by the silence rule long before).
pub const SEND_LIMIT: Duration = Duration::from_secs(30);

/// When the last byte arrived on a connection.
#[derive(Debug)]
pub struct Heard {
    base: Instant,
    /// Milliseconds after `base`.
    last_ms: AtomicU64,
}

impl Heard {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            base: Instant::now(),
            last_ms: AtomicU64::new(0),
        })
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub fn touch(&self) {
        self.last_ms.fetch_max(self.now_ms(), Ordering::Relaxed);
    }

    /// The moment the link counts as dead unless a byte arrives before.
    pub fn deadline(&self) -> tokio::time::Instant {
        let last = self.base + Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        tokio::time::Instant::from_std(last + SILENCE_LIMIT)
    }

    pub fn silent_for(&self) -> Duration {
        Duration::from_millis(self.now_ms().saturating_sub(self.last_ms.load(Ordering::Relaxed)))
    }

    /// Waits until the link has been silent for `SILENCE_LIMIT`; returns how long it was.
    pub async fn silence(&self) -> Duration {
        loop {
            tokio::time::sleep_until(self.deadline()).await;
            let silent = self.silent_for();
            if silent >= SILENCE_LIMIT {
                return silent;
            }
        }
    }
}

/// A connection that records in `Heard` when bytes arrive (under TLS: the raw socket's bytes).
pub struct Watched<T> {
    inner: T,
    heard: Arc<Heard>,
}

impl<T> Watched<T> {
    pub fn new(inner: T, heard: Arc<Heard>) -> Self {
        heard.touch();
        Self { inner, heard }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.heard.touch();
        }
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, data)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn silence_is_counted_from_the_last_byte() {
        let heard = Heard::new();
        let (a, mut b) = tokio::io::duplex(64);
        let mut a = Watched::new(a, heard.clone());
        let t0 = Instant::now();
        // A byte every 0.8 s keeps it alive past the limit.
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_millis(800)).await;
            b.write_all(b"x").await.unwrap();
            let mut one = [0u8; 1];
            a.read_exact(&mut one).await.unwrap();
        }
        let spoke = Instant::now();
        let silent = heard.silence().await;
        assert!(silent >= SILENCE_LIMIT, "{silent:?}");
        // Dropped at the limit after the last byte, not after the first.
        let at = spoke.elapsed();
        assert!(at >= SILENCE_LIMIT - Duration::from_millis(5), "{at:?}");
        assert!(at < SILENCE_LIMIT + Duration::from_millis(300), "{at:?}");
        assert!(t0.elapsed() >= Duration::from_millis(3200) + SILENCE_LIMIT);
    }
}
