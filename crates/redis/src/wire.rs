//! [`RespConnection`]: a connection to one Redis server whose every read the client bounds,
//! in time (each read ends by the call's deadline, however slowly the bytes come) and in size
//! (a reply larger than [`RespConnection::max_reply_bytes`] is refused as its header
//! arrives, before its bytes do). It is what [`crate::RedisFilter::connect`] and
//! [`crate::RedisBloomFilter::connect`] open.
//!
//! The redis crate's own [`redis::Connection`] reads a reply for as long as it keeps coming:
//! an endless reply from a broken proxy grows the client without bound, and a server that
//! sends a byte now and then holds a call far past its deadline. Here the reader is ours,
//! RESP2 only (the filters send no `HELLO 3`), over a socket the client opened itself.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
#[cfg(unix)]
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use redis::{ConnectionAddr, IntoConnectionInfo, RedisResult, Value};

use std::future::Future;

use crate::exec::{block_on, run_wire, Batch, Connection, Replies, Round, Sent, Wire};

/// The largest reply a [`RespConnection`] reads unless told otherwise: a whole shard of a
/// filter (Redis's largest string, 512 MiB) and a little more.
pub const DEFAULT_MAX_REPLY_BYTES: u64 = (512 << 20) + (64 << 10);

/// The deepest nesting of arrays read (a filter's replies nest two deep).
const MAX_DEPTH: usize = 16;

/// Bytes asked of the socket per read at least.
const READ_CHUNK: usize = 64 << 10;

/// The longest a socket's timeout is set to. Linux keeps a socket timeout on its timer wheel,
/// whose slots grow coarser with the time to wait (past about 256 ms a timeout may fire up to
/// 32 ms late, past 2 s up to 256 ms: some 12% of any timeout), so one long timeout would
/// end a call well past its deadline. Waits are cut into steps no longer than this, the last
/// of them short enough to fire within a few milliseconds of the deadline.
const MAX_WAIT: Duration = Duration::from_millis(50);

/// The socket timeout for a wait of `left`: at most [`MAX_WAIT`], at least 1 µs (a zero
/// timeout means none), no timeout when there is no deadline.
fn socket_timeout(left: Option<Duration>) -> Option<Duration> {
    left.map(|l| l.clamp(Duration::from_micros(1), MAX_WAIT))
}

/// A reply over the limit: the error inside the [`io::Error`] a read returns, which
/// [`crate::Error`] reports as [`crate::Error::ReplyTooLarge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplyLimit {
    /// Bytes the reply has or declares, at least.
    pub(crate) size: u64,
    /// The limit.
    pub(crate) max: u64,
}

impl fmt::Display for ReplyLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a reply of {} bytes or more, over the limit of {} bytes",
            self.size, self.max
        )
    }
}

impl std::error::Error for ReplyLimit {}

impl ReplyLimit {
    /// What a [`redis::RedisError`] says of a limit: its kind, description and detail.
    const DESCRIPTION: &'static str = "a reply over the connection's limit";

    /// `e` as a [`redis::RedisError`] the filter can tell apart: the limit in its detail.
    fn to_redis(e: io::Error) -> redis::RedisError {
        match e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<ReplyLimit>())
        {
            Some(limit) => redis::RedisError::from((
                redis::ErrorKind::Extension,
                Self::DESCRIPTION,
                format!("{} {}", limit.size, limit.max),
            )),
            // Bytes that are not RESP: the replies cannot be read in step any more.
            None if e.kind() == io::ErrorKind::InvalidData => redis::RedisError::from((
                redis::ErrorKind::UnexpectedReturnType,
                "a reply that is not RESP",
                e.to_string(),
            )),
            None => e.into(),
        }
    }

    /// The limit a [`redis::RedisError`] made by [`Self::to_redis`] reports.
    pub(crate) fn from_error(e: &redis::RedisError) -> Option<ReplyLimit> {
        if e.kind() != redis::ErrorKind::Extension || !e.to_string().contains(Self::DESCRIPTION) {
            return None;
        }
        let mut numbers = e.detail()?.split(' ').map(str::parse::<u64>);
        Some(ReplyLimit {
            size: numbers.next()?.ok()?,
            max: numbers.next()?.ok()?,
        })
    }
}

/// Bytes read from a server and not yet taken as replies: `buf[pos..end]`.
struct Inbox {
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// Bytes `buf[pos..end]` must hold before the reply there can be whole.
    need: usize,
    /// Replies whose read ended at a deadline: dropped when they come.
    skip: usize,
    /// The largest reply read.
    max_reply: u64,
}

impl Inbox {
    fn new() -> Inbox {
        Inbox {
            buf: Vec::new(),
            pos: 0,
            end: 0,
            need: 0,
            skip: 0,
            max_reply: DEFAULT_MAX_REPLY_BYTES,
        }
    }

    /// The next whole reply in the buffer, push messages (RESP3: client tracking, pub/sub,
    /// which answer no command) and replies to skip passed over; `None` until more bytes
    /// come.
    fn next(&mut self) -> io::Result<Option<Value>> {
        loop {
            let frame = &self.buf[self.pos..self.end];
            if frame.is_empty() || frame.len() < self.need {
                return Ok(None);
            }
            match parse(frame, self.max_reply)? {
                Ok((value, used)) => {
                    let push = frame[0] == b'>';
                    self.pos += used;
                    self.need = 0;
                    if push {
                        continue;
                    }
                    if self.skip > 0 {
                        self.skip -= 1;
                        continue;
                    }
                    return Ok(Some(value));
                }
                Err(need) => {
                    self.need = need;
                    return Ok(None);
                }
            }
        }
    }

    /// Room for the next read: at least [`READ_CHUNK`], and what the reply under way needs
    /// (up to 16 MiB a read).
    fn room(&mut self) -> &mut [u8] {
        if self.pos == self.end {
            self.pos = 0;
            self.end = 0;
        } else if self.pos > self.buf.len() / 2 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        let room = (self.pos + self.need)
            .saturating_sub(self.end)
            .clamp(READ_CHUNK, 16 << 20);
        if self.buf.len() - self.end < room {
            self.buf.resize(self.end + room, 0);
        }
        &mut self.buf[self.end..]
    }

    /// `n` bytes were read into [`Self::room`].
    fn filled(&mut self, n: usize) {
        self.end += n;
    }
}

fn closed(addr: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("{addr} closed the connection"),
    )
}

/// The commands that set a connection up as `settings` ask (`AUTH`, `SELECT`).
fn setup(settings: &redis::RedisConnectionInfo) -> Batch {
    let mut batch = Batch::new();
    batch.group();
    if let Some(password) = settings.password() {
        match settings.username() {
            Some(user) => {
                batch.start(3);
                batch.arg(b"AUTH");
                batch.arg(user.as_bytes());
            }
            None => {
                batch.start(2);
                batch.arg(b"AUTH");
            }
        }
        batch.arg(password.as_bytes());
        batch.end_command();
    }
    if settings.db() != 0 {
        batch.start(2);
        batch.arg(b"SELECT");
        batch.arg(settings.db().to_string().as_bytes());
        batch.end_command();
    }
    batch
}

/// Runs the [`setup`] of a new connection by `deadline` and checks its answers.
async fn set_up<W: Wire>(
    con: &mut W,
    settings: &redis::RedisConnectionInfo,
    deadline: Option<Instant>,
    addr: &str,
) -> RedisResult<()> {
    let batch = setup(settings);
    if batch.is_empty() {
        return Ok(());
    }
    let mut round = Round {
        deadline,
        ..Round::default()
    };
    let replies = run_wire(con, &batch, &mut round).await?;
    if replies.timed_out {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("no answer to AUTH / SELECT from {addr}"),
        )
        .into());
    }
    let auth = settings.password().is_some();
    for (i, v) in replies.groups.into_iter().flatten().enumerate() {
        if let Value::ServerError(e) = v {
            // The first reply is AUTH's when there is a password.
            let kind = if auth && i == 0 {
                redis::ErrorKind::AuthenticationFailed
            } else {
                redis::ErrorKind::InvalidClientConfig
            };
            return Err(redis::RedisError::from((
                kind,
                "the server refused the connection's setup",
                format!("{} {}", e.code(), e.details().unwrap_or("")),
            )));
        }
    }
    Ok(())
}

/// The error for an address this module does not open.
fn unsupported(addr: &ConnectionAddr) -> redis::RedisError {
    redis::RedisError::from((
        redis::ErrorKind::InvalidClientConfig,
        "RespConnection opens redis:// and unix:// addresses; use a redis::Connection for",
        addr.to_string(),
    ))
}

enum Stream {
    Tcp(TcpStream),
    #[cfg(unix)]
    Unix(UnixStream),
}

impl Stream {
    fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            #[cfg(unix)]
            Stream::Unix(s) => s.set_read_timeout(t),
        }
    }

    fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(t),
            #[cfg(unix)]
            Stream::Unix(s) => s.set_write_timeout(t),
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            #[cfg(unix)]
            Stream::Unix(s) => s.read(buf),
        }
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            #[cfg(unix)]
            Stream::Unix(s) => s.write(buf),
        }
    }
}

/// A connection to one Redis server (TCP or a Unix socket) that bounds every reply it reads
/// by the call's deadline and by [`Self::max_reply_bytes`]; a signal that interrupts a read
/// or a write is retried. Open it with [`RespConnection::open`], or let
/// [`crate::RedisFilter::connect`] do it.
///
/// ```no_run
/// use std::time::Duration;
/// use bloomkit_redis::{BlockedBloomFilter, Options, RedisFilter, RespConnection};
///
/// let con = RespConnection::open("redis://127.0.0.1:6379/", Some(Duration::from_secs(2)))?;
/// let options = Options::new(1_000_000, 0.01);
/// let mut seen: RedisFilter<BlockedBloomFilter<str>, _> =
///     RedisFilter::open_or_create(con, "crawler:seen", &options)?;
/// seen.try_insert("https://example.com/")?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// `rediss://` (TLS) URLs are not opened here: use a [`redis::Connection`] for those, whose
/// reads the redis crate bounds only by its socket timeouts.
pub struct RespConnection {
    stream: Stream,
    inbox: Inbox,
    /// The deadline of the call under way.
    deadline: Option<Instant>,
    /// The read timeout the socket has now (`None`: never set).
    read_timeout: Option<Option<Duration>>,
    addr: String,
}

impl fmt::Debug for RespConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RespConnection")
            .field("addr", &self.addr)
            .field("max_reply_bytes", &self.inbox.max_reply)
            .finish()
    }
}

impl RespConnection {
    /// Connects to `url` (`redis://[user:password@]host:port[/db]`, `unix:///path`, any
    /// [`IntoConnectionInfo`]), authenticates and selects the database, all within
    /// `timeout` (none: wait as long as the system does).
    ///
    /// # Errors
    /// A [`redis::RedisError`]: a bad URL, a `rediss://` URL, refused credentials
    /// ([`redis::ErrorKind::AuthenticationFailed`]), or no connection within `timeout`
    /// (an I/O error of kind [`io::ErrorKind::TimedOut`]).
    pub fn open(url: impl IntoConnectionInfo, timeout: Option<Duration>) -> RedisResult<Self> {
        let info = url.into_connection_info()?;
        let deadline = crate::transport::deadline(timeout);
        let (stream, addr) = match info.addr() {
            ConnectionAddr::Tcp(host, port) => {
                let addrs: Vec<SocketAddr> = (host.as_str(), *port).to_socket_addrs()?.collect();
                (
                    Stream::Tcp(connect_tcp(&addrs, deadline)?),
                    format!("{host}:{port}"),
                )
            }
            #[cfg(unix)]
            ConnectionAddr::Unix(path) => (
                Stream::Unix(UnixStream::connect(path)?),
                path.display().to_string(),
            ),
            other => return Err(unsupported(other)),
        };
        let mut con = RespConnection {
            stream,
            inbox: Inbox::new(),
            deadline: None,
            read_timeout: None,
            addr,
        };
        let addr = con.addr.clone();
        block_on(set_up(&mut con, info.redis_settings(), deadline, &addr))?;
        Ok(con)
    }

    /// The largest reply read: a larger one ends the call with
    /// [`crate::Error::ReplyTooLarge`] (and retires the connection).
    pub fn max_reply_bytes(&self) -> u64 {
        self.inbox.max_reply
    }

    /// Changes the largest reply read (at least 64 bytes).
    pub fn set_max_reply_bytes(&mut self, max: u64) {
        self.inbox.max_reply = max.max(64);
    }

    /// Time left before the deadline; a [`io::ErrorKind::TimedOut`] error once it passed.
    fn left(&self) -> io::Result<Option<Duration>> {
        match self.deadline {
            None => Ok(None),
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => Ok(Some(left)),
                _ => Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the deadline passed",
                )),
            },
        }
    }

    /// Reads more bytes into the inbox, by the deadline; a signal is retried.
    fn fill(&mut self) -> io::Result<()> {
        loop {
            let left = self.left()?;
            // The socket's timeout is set again only when it is over the time left by more
            // than 1/32 of it: setting it for every read would cost a system call each, and
            // a socket that times out early is read again with the time then left.
            let fits = match (self.read_timeout, left) {
                (Some(None), None) => true,
                (Some(Some(set)), Some(left)) => set <= left + left / 32,
                _ => false,
            };
            if !fits {
                let t = socket_timeout(left);
                self.stream.set_read_timeout(t)?;
                self.read_timeout = Some(t);
            }
            match self.stream.read(self.inbox.room()) {
                Ok(0) => return Err(closed(&self.addr)),
                Ok(n) => {
                    self.inbox.filled(n);
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    // The socket's timeout ran out: the deadline has passed, or the timeout
                    // was set before the time left shrank; `left` tells which.
                    self.read_timeout = None;
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The next whole reply, by the deadline and within the size limit.
    fn read_reply(&mut self) -> io::Result<Value> {
        loop {
            if let Some(v) = self.inbox.next()? {
                return Ok(v);
            }
            self.fill()?;
        }
    }

    /// Writes `bytes` whole by the deadline: [`Sent::None`] when the deadline passed before
    /// the first byte, [`Sent::Part`] when it passed after it.
    fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<Sent> {
        let mut wrote = false;
        let mut timeout: Option<Option<Duration>> = None;
        while !bytes.is_empty() {
            let left = match self.left() {
                Ok(left) => left,
                Err(_) if wrote => return Ok(Sent::Part),
                Err(_) => return Ok(Sent::None),
            };
            let t = socket_timeout(left);
            if timeout != Some(t) {
                self.stream.set_write_timeout(t)?;
                timeout = Some(t);
            }
            match self.stream.write(bytes) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    wrote = true;
                    bytes = &bytes[n..];
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    timeout = None;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(Sent::All)
    }

    fn recv_now(&mut self, round: &Round) -> RedisResult<Option<Value>> {
        self.deadline = round.deadline;
        match self.read_reply() {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                // Its bytes, when they come, belong to no one.
                self.inbox.skip += 1;
                Ok(None)
            }
            Err(e) => Err(ReplyLimit::to_redis(e)),
        }
    }
}

/// Connects to the first of `addrs` that answers, by the deadline.
fn connect_tcp(addrs: &[SocketAddr], deadline: Option<Instant>) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the host name has no address");
    for addr in addrs {
        let out = match deadline {
            None => TcpStream::connect(addr),
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => TcpStream::connect_timeout(addr, left),
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no connection to {addr} within the deadline"),
                    ))
                }
            },
        };
        match out {
            Ok(s) => {
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

impl Wire for RespConnection {
    fn send(&mut self, bytes: &[u8], round: &Round) -> impl Future<Output = RedisResult<Sent>> {
        self.deadline = round.deadline;
        std::future::ready(self.write_all(bytes).map_err(redis::RedisError::from))
    }

    fn recv(&mut self, round: &Round) -> impl Future<Output = RedisResult<Option<Value>>> {
        std::future::ready(self.recv_now(round))
    }
}

impl Connection for RespConnection {
    /// Writes the batch, then reads its replies, all by the deadline (see the type's docs).
    fn run(
        &mut self,
        batch: &Batch,
        round: &mut Round,
    ) -> impl Future<Output = RedisResult<Replies>> {
        run_wire(self, batch, round)
    }
}

#[cfg(feature = "tokio")]
pub use self::tokio_wire::AsyncRespConnection;

#[cfg(feature = "tokio")]
mod tokio_wire {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    enum AsyncStream {
        Tcp(tokio::net::TcpStream),
        #[cfg(unix)]
        Unix(tokio::net::UnixStream),
    }

    impl AsyncStream {
        async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self {
                AsyncStream::Tcp(s) => s.read(buf).await,
                #[cfg(unix)]
                AsyncStream::Unix(s) => s.read(buf).await,
            }
        }

        async fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            match self {
                AsyncStream::Tcp(s) => s.write(buf).await,
                #[cfg(unix)]
                AsyncStream::Unix(s) => s.write(buf).await,
            }
        }
    }

    /// [`RespConnection`] on tokio: every reply bounded by the call's deadline (exactly:
    /// tokio's timers, whatever the redis crate's defaults) and by
    /// [`Self::max_reply_bytes`]. For [`crate::AsyncRedisFilter`] and
    /// [`crate::AsyncRedisBloomFilter`]; the runtime needs timers (`enable_time`) and I/O
    /// (`enable_io`).
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use bloomkit_redis::{AsyncRedisFilter, AsyncRespConnection, BlockedBloomFilter, Options};
    ///
    /// let con = AsyncRespConnection::open("redis://127.0.0.1:6379/", Some(Duration::from_secs(1))).await?;
    /// let mut seen: AsyncRedisFilter<BlockedBloomFilter<str>, _> =
    ///     AsyncRedisFilter::open_or_create(con, "seen", &Options::new(1_000_000, 0.01)).await?;
    /// seen.try_insert("https://example.com/").await?;
    /// # Ok(())
    /// # }
    /// ```
    pub struct AsyncRespConnection {
        stream: AsyncStream,
        inbox: Inbox,
        addr: String,
    }

    impl fmt::Debug for AsyncRespConnection {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("AsyncRespConnection")
                .field("addr", &self.addr)
                .field("max_reply_bytes", &self.inbox.max_reply)
                .finish()
        }
    }

    /// `future`, cut at `deadline`: `None` once it passed.
    async fn by<T>(deadline: Option<Instant>, future: impl Future<Output = T>) -> Option<T> {
        match deadline {
            None => Some(future.await),
            Some(d) => tokio::time::timeout_at(d.into(), future).await.ok(),
        }
    }

    impl AsyncRespConnection {
        /// As [`RespConnection::open`], on tokio.
        ///
        /// # Errors
        /// As [`RespConnection::open`].
        pub async fn open(
            url: impl IntoConnectionInfo,
            timeout: Option<Duration>,
        ) -> RedisResult<Self> {
            let info = url.into_connection_info()?;
            let deadline = crate::transport::deadline(timeout);
            let timed_out = |addr: &str| {
                redis::RedisError::from(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no connection to {addr} within the deadline"),
                ))
            };
            let (stream, addr) = match info.addr() {
                ConnectionAddr::Tcp(host, port) => {
                    let addr = format!("{host}:{port}");
                    let s = by(
                        deadline,
                        tokio::net::TcpStream::connect((host.as_str(), *port)),
                    )
                    .await
                    .ok_or_else(|| timed_out(&addr))??;
                    s.set_nodelay(true)?;
                    (AsyncStream::Tcp(s), addr)
                }
                #[cfg(unix)]
                ConnectionAddr::Unix(path) => {
                    let addr = path.display().to_string();
                    let s = by(deadline, tokio::net::UnixStream::connect(path))
                        .await
                        .ok_or_else(|| timed_out(&addr))??;
                    (AsyncStream::Unix(s), addr)
                }
                other => return Err(unsupported(other)),
            };
            let mut con = AsyncRespConnection {
                stream,
                inbox: Inbox::new(),
                addr,
            };
            let addr = con.addr.clone();
            set_up(&mut con, info.redis_settings(), deadline, &addr).await?;
            Ok(con)
        }

        /// The largest reply read (see [`RespConnection::max_reply_bytes`]).
        pub fn max_reply_bytes(&self) -> u64 {
            self.inbox.max_reply
        }

        /// Changes the largest reply read (at least 64 bytes).
        pub fn set_max_reply_bytes(&mut self, max: u64) {
            self.inbox.max_reply = max.max(64);
        }
    }

    impl Wire for AsyncRespConnection {
        async fn send(&mut self, mut bytes: &[u8], round: &Round) -> RedisResult<Sent> {
            let mut wrote = false;
            while !bytes.is_empty() {
                match by(round.deadline, self.stream.write(bytes)).await {
                    None if wrote => return Ok(Sent::Part),
                    None => return Ok(Sent::None),
                    Some(Ok(0)) => return Err(io::Error::from(io::ErrorKind::WriteZero).into()),
                    Some(Ok(n)) => {
                        wrote = true;
                        bytes = &bytes[n..];
                    }
                    Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                    Some(Err(e)) => return Err(e.into()),
                }
            }
            Ok(Sent::All)
        }

        async fn recv(&mut self, round: &Round) -> RedisResult<Option<Value>> {
            loop {
                if let Some(v) = self.inbox.next().map_err(ReplyLimit::to_redis)? {
                    return Ok(Some(v));
                }
                let room = self.inbox.room();
                match by(round.deadline, self.stream.read(room)).await {
                    None => {
                        // Its bytes, when they come, belong to no one.
                        self.inbox.skip += 1;
                        return Ok(None);
                    }
                    Some(Ok(0)) => return Err(closed(&self.addr).into()),
                    Some(Ok(n)) => self.inbox.filled(n),
                    Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                    Some(Err(e)) => return Err(e.into()),
                }
            }
        }
    }

    impl Connection for AsyncRespConnection {
        async fn run(&mut self, batch: &Batch, round: &mut Round) -> RedisResult<Replies> {
            run_wire(self, batch, round).await
        }
    }
}

/// The longest line read: a status, an error, a number, a length.
const MAX_LINE: usize = 64 << 10;

/// Parses one RESP2 reply at the start of `bytes`: `Ok(Ok((value, bytes it took)))`, or
/// `Ok(Err(n))` while incomplete, where `n` bytes at least are needed before it can be whole
/// (so a large reply arriving in pieces is parsed again only a few times, not once a piece).
/// A reply that declares or holds more than `max` bytes, a line longer than [`MAX_LINE`],
/// malformed input, or nesting deeper than [`MAX_DEPTH`] is an error.
fn parse(bytes: &[u8], max: u64) -> io::Result<Result<(Value, usize), usize>> {
    let mut at = 0;
    let mut need = 0;
    match value(bytes, &mut at, max, 0, &mut need)? {
        Some(v) => Ok(Ok((v, at))),
        None if bytes.len() as u64 > max => Err(too_large(bytes.len() as u64, max)),
        None => Ok(Err(need.max(bytes.len() + 1))),
    }
}

fn too_large(size: u64, max: u64) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, ReplyLimit { size, max })
}

fn malformed(what: impl Into<String>) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("not a RESP reply: {}", what.into()),
    )
}

/// The line at `*at` (without its CRLF), moving `*at` past it; `None` while incomplete.
fn line<'a>(bytes: &'a [u8], at: &mut usize) -> io::Result<Option<&'a [u8]>> {
    let rest = &bytes[*at..];
    let window = &rest[..rest.len().min(MAX_LINE + 2)];
    match window.windows(2).position(|w| w == b"\r\n") {
        Some(end) => {
            *at += end + 2;
            Ok(Some(&rest[..end]))
        }
        None if window.len() > MAX_LINE + 1 => {
            Err(malformed(format!("a line longer than {MAX_LINE} bytes")))
        }
        None => Ok(None),
    }
}

fn number(text: &[u8]) -> io::Result<i64> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            malformed(format!(
                "{:?} is not a number",
                String::from_utf8_lossy(text)
            ))
        })
}

/// The value at `*at`, moving `*at` past it; `None` while incomplete, with `*need` a lower
/// bound of the bytes the whole buffer must hold before it can be.
fn value(
    bytes: &[u8],
    at: &mut usize,
    max: u64,
    depth: usize,
    need: &mut usize,
) -> io::Result<Option<Value>> {
    let start = *at;
    let Some(&kind) = bytes.get(start) else {
        *need = start + 3;
        return Ok(None);
    };
    let Some(text) = line(bytes, at)? else {
        *need = bytes.len() + 1;
        return Ok(None);
    };
    let text = &text[1..];
    let used = *at as u64;
    Ok(Some(match kind {
        b'+' => match text {
            b"OK" => Value::Okay,
            _ => Value::SimpleString(String::from_utf8_lossy(text).into_owned()),
        },
        b'-' => redis::parse_redis_value(&bytes[start..*at])
            .map_err(|e| malformed(format!("an error reply: {e}")))?,
        b':' => Value::Int(number(text)?),
        b'$' => {
            let len = number(text)?;
            if len < 0 {
                return Ok(Some(Value::Nil));
            }
            let len = len as u64;
            if used.saturating_add(len).saturating_add(2) > max {
                return Err(too_large(used.saturating_add(len + 2), max));
            }
            let end = *at + len as usize;
            if bytes.len() < end + 2 {
                *need = end + 2;
                return Ok(None);
            }
            if &bytes[end..end + 2] != b"\r\n" {
                return Err(malformed("a bulk string does not end where it said"));
            }
            let v = Value::BulkString(bytes[*at..end].to_vec());
            *at = end + 2;
            v
        }
        b'*' | b'>' => {
            let n = number(text)?;
            if n < 0 {
                return Ok(Some(Value::Nil));
            }
            // Each element takes 3 bytes at least (`+\r\n`).
            let least = (n as u64).saturating_mul(3);
            if used.saturating_add(least) > max {
                return Err(too_large(used.saturating_add(least), max));
            }
            if depth >= MAX_DEPTH {
                return Err(malformed("arrays nested too deep"));
            }
            let n = n as usize;
            let mut items = Vec::with_capacity(n.min((bytes.len() - *at) / 3));
            for i in 0..n {
                match value(bytes, at, max, depth + 1, need)? {
                    Some(v) => items.push(v),
                    None => {
                        *need += 3 * (n - i - 1);
                        return Ok(None);
                    }
                }
            }
            Value::Array(items)
        }
        other => return Err(malformed(format!("a reply starting with byte {other}"))),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_whole_or_wait_for_more() {
        let all = b"+OK\r\n:42\r\n$3\r\nabc\r\n*2\r\n$-1\r\n-ERR bad\r\n*-1\r\n+PONG\r\n";
        let mut at = 0;
        let mut got = Vec::new();
        while at < all.len() {
            let (v, used) = parse(&all[at..], 1 << 20).unwrap().unwrap();
            got.push(v);
            at += used;
        }
        assert_eq!(got.len(), 6);
        assert_eq!(got[0], Value::Okay);
        assert_eq!(got[1], Value::Int(42));
        assert_eq!(got[2], Value::BulkString(b"abc".to_vec()));
        assert!(
            matches!(&got[3], Value::Array(a) if a.len() == 2 && a[0] == Value::Nil
            && matches!(&a[1], Value::ServerError(e) if e.code() == "ERR"))
        );
        assert_eq!(got[4], Value::Nil);
        assert_eq!(got[5], Value::SimpleString("PONG".into()));
        for cut in 0..all.len() {
            // Every prefix of the first reply that ends short of it waits for more.
            let first_end = parse(&all[..], 1 << 20).unwrap().unwrap().1;
            if cut < first_end {
                assert!(parse(&all[..cut], 1 << 20).unwrap().is_err(), "{cut}");
            }
        }
        let (v, _) = parse(b"*2\r\n$3\r\nabc\r\n:1\r\n", 1 << 20)
            .unwrap()
            .unwrap();
        assert_eq!(
            v,
            Value::Array(vec![Value::BulkString(b"abc".to_vec()), Value::Int(1)])
        );
        for cut in 0..17 {
            assert!(parse(&b"*2\r\n$3\r\nabc\r\n:1\r\n"[..cut], 1 << 20)
                .unwrap()
                .is_err());
        }
    }

    #[test]
    fn a_reply_over_the_limit_is_refused_by_its_header() {
        let limit = |e: io::Error| {
            *e.get_ref()
                .and_then(|e| e.downcast_ref::<ReplyLimit>())
                .expect("a ReplyLimit")
        };
        let e = parse(b"$999999999999\r\n", 1000).unwrap_err();
        assert_eq!(limit(e).max, 1000);
        assert!(limit(parse(b"*100000000\r\n", 1000).unwrap_err()).size > 1000);
        assert!(parse(b"*100\r\n", 1000).unwrap().is_err());
        // A line that never ends is refused once the buffer holds more than the limit.
        assert!(parse(&[b'+'; 999], 1000).unwrap().is_err());
        assert!(limit(parse(&[b'+'; 1001], 1000).unwrap_err()).size > 1000);
        // Nested arrays whose elements each fit, but not together.
        let mut many = b"*1000\r\n".to_vec();
        for _ in 0..1000 {
            many.extend_from_slice(b"$1\r\nx\r\n");
        }
        assert!(parse(&many, 1 << 20).unwrap().is_ok());
        assert!(parse(&many, 3500).is_err());
    }

    #[test]
    fn malformed_replies_are_errors_not_panics() {
        for bad in [
            &b"$3\r\nabcd\r\n"[..],
            b"?what\r\n",
            b":12x\r\n",
            b"$x\r\n",
            b"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
        ] {
            let e = parse(bad, 1 << 20).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{bad:?}");
        }
    }
}
