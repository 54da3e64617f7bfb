//! A lying RESP server for hostile-server tests: it speaks the Redis protocol on
//! 127.0.0.1, and a test decides every reply, wrong, late, trickled, missing or a closed
//! connection. It is a deliberately hostile fake for robustness tests only; tests of what a
//! client does against Redis itself use a real server ([`crate::redis_server`]).
//!
//! [`LyingServer::start`] takes a handler called with each command's arguments, in order,
//! for every command of every connection (pipelined commands one at a time, each reply sent
//! before the next command is handled). The handler sees every command, connection setup
//! included; [`default_reply`] gives the ordinary answer to those (`PING`, `CLIENT ...`,
//! `SELECT`, `HELLO`, `SCRIPT LOAD`), so a handler usually reads:
//!
//! ```
//! use bloomkit_testkit::resp_server::{default_reply, LyingServer, Reply};
//!
//! let server = LyingServer::start(|args: &[Vec<u8>]| match args[0].as_slice() {
//!     b"GET" => Reply::bulk(b"not what you stored"),
//!     _ => default_reply(args).unwrap_or_else(|| Reply::error("ERR unexpected")),
//! });
//! println!("{}", server.url());
//! ```
//!
//! Input that is not RESP gets `-ERR Protocol error: ...` and the connection is closed, as
//! Redis does; the server never panics on what a client sends.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::resp::{self, Value};

/// What the server does in answer to one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Writes these bytes as they are (valid RESP or not).
    Raw(Vec<u8>),
    /// Sleeps, then sends the reply. Later commands of the connection wait, as they would on
    /// a slow server.
    Delayed(Duration, Box<Reply>),
    /// Sends the bytes one at a time, with a sleep between two bytes (so `(len - 1) * gap`
    /// in all).
    Trickle {
        /// The bytes.
        bytes: Vec<u8>,
        /// The sleep between two bytes.
        gap: Duration,
    },
    /// Sends `head`, then `fill` again and again until the client goes away or the server
    /// stops: a reply that never ends (an endless bulk string or array).
    Endless {
        /// The reply's start (`$999999999999\r\n`, `*2147483647\r\n`).
        head: Vec<u8>,
        /// What follows it, forever.
        fill: Vec<u8>,
    },
    /// Closes the connection (nothing is sent; the replies before were).
    Close,
    /// Never answers this command, and goes on reading the next ones.
    Silent,
}

/// `text` with CR and LF made spaces, so that a status or error line stays one line.
fn one_line(text: &str) -> String {
    text.replace(['\r', '\n'], " ")
}

impl Reply {
    /// `+OK`.
    pub fn ok() -> Reply {
        Reply::simple("OK")
    }

    /// A status reply, `+text` (CR and LF in `text` become spaces).
    pub fn simple(text: &str) -> Reply {
        Reply::Raw(format!("+{}\r\n", one_line(text)).into_bytes())
    }

    /// An error reply, `-message`: the message starts with its code (`ERR bad thing`,
    /// `MOVED 3999 127.0.0.1:7002`, `NOSCRIPT ...`); CR and LF become spaces.
    pub fn error(message: &str) -> Reply {
        Reply::Raw(format!("-{}\r\n", one_line(message)).into_bytes())
    }

    /// An integer reply, `:n`.
    pub fn int(n: i64) -> Reply {
        Reply::Raw(format!(":{n}\r\n").into_bytes())
    }

    /// A bulk string, `$len` and the bytes.
    pub fn bulk(bytes: &[u8]) -> Reply {
        let mut out = format!("${}\r\n", bytes.len()).into_bytes();
        out.extend_from_slice(bytes);
        out.extend_from_slice(b"\r\n");
        Reply::Raw(out)
    }

    /// The nil bulk string, `$-1`.
    pub fn nil() -> Reply {
        Reply::Raw(b"$-1\r\n".to_vec())
    }

    /// An array of replies, serialized back to back as [`to_bytes`](Self::to_bytes) does
    /// (no delays inside an array).
    pub fn array(items: Vec<Reply>) -> Reply {
        let mut out = format!("*{}\r\n", items.len()).into_bytes();
        for item in items {
            out.extend_from_slice(&item.to_bytes());
        }
        Reply::Raw(out)
    }

    /// A [`Value`] as a server sends it (to replay a real server's answer).
    pub fn value(value: &Value) -> Reply {
        match value {
            Value::Simple(s) => Reply::simple(s),
            Value::Error(e) => Reply::error(e),
            Value::Int(n) => Reply::int(*n),
            Value::Bulk(b) => Reply::bulk(b),
            Value::Nil => Reply::nil(),
            Value::Array(items) => Reply::array(items.iter().map(Reply::value).collect()),
        }
    }

    /// This reply, sent after `delay`.
    pub fn after(self, delay: Duration) -> Reply {
        Reply::Delayed(delay, Box::new(self))
    }

    /// This reply's bytes, sent one at a time `gap` apart.
    pub fn trickled(self, gap: Duration) -> Reply {
        Reply::Trickle {
            bytes: self.to_bytes(),
            gap,
        }
    }

    /// The bytes this reply sends, without its timing: a `Delayed` reply's inner bytes, a
    /// `Trickle`'s bytes, nothing for `Close` and `Silent`.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Reply::Raw(bytes) | Reply::Trickle { bytes, .. } => bytes.clone(),
            Reply::Endless { head, .. } => head.clone(),
            Reply::Delayed(_, inner) => inner.to_bytes(),
            Reply::Close | Reply::Silent => Vec::new(),
        }
    }
}

/// The ordinary answer to the commands clients send when they connect or load scripts, or
/// `None` for any other command (`args[0]` upper-case, as the handler gets it; subcommands
/// in any case):
///
/// - `PING` → `+PONG` (with an argument: it, as a bulk string); `ECHO x` → `x`;
/// - `CLIENT ...` (`SETINFO`, `SETNAME`, ...), `SELECT`, `AUTH`, `READONLY`, `READWRITE`,
///   `QUIT` → `+OK`;
/// - `HELLO` → `-ERR unknown command 'HELLO', ...`, as a server before Redis 6 says, so
///   that clients fall back to RESP2 (the only protocol this server speaks);
/// - `SCRIPT LOAD script` → the script's real SHA-1 in hex, as Redis computes it (so a
///   client may check it, and `EVALSHA` arrives with the digest Redis would expect).
pub fn default_reply(args: &[Vec<u8>]) -> Option<Reply> {
    let (name, rest) = args.split_first()?;
    let sub = |i: usize, want: &str| {
        rest.get(i)
            .is_some_and(|a| a.eq_ignore_ascii_case(want.as_bytes()))
    };
    Some(match name.as_slice() {
        b"PING" => match rest {
            [] => Reply::simple("PONG"),
            [message, ..] => Reply::bulk(message),
        },
        b"ECHO" => Reply::bulk(rest.first()?),
        b"CLIENT" | b"SELECT" | b"AUTH" | b"READONLY" | b"READWRITE" | b"QUIT" => Reply::ok(),
        b"HELLO" => Reply::error("ERR unknown command 'HELLO', with args beginning with: "),
        b"SCRIPT" if sub(0, "LOAD") => Reply::bulk(sha1_hex(rest.get(1)?).as_bytes()),
        _ => return None,
    })
}

/// SHA-1 of `data` in lower-case hex, as Redis names scripts.
pub fn sha1_hex(data: &[u8]) -> String {
    sha1(data).iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-1 (FIPS 180-4): only to name scripts as Redis does, not for security.
fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xefcd_ab89,
        0x98ba_dcfe,
        0x1032_5476,
        0xc3d2_e1f0,
    ];
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&(data.len() as u64).wrapping_mul(8).to_be_bytes());
    for block in message.chunks_exact(64) {
        let mut w = [0u32; 80];
        for (word, bytes) in w.iter_mut().zip(block.chunks_exact(4)) {
            *word = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        for t in 16..80 {
            w[t] = (w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (t, &word) in w.iter().enumerate() {
            let (f, k) = match t {
                0..=19 => ((b & c) | (!b & d), 0x5a82_7999),
                20..=39 => (b ^ c ^ d, 0x6ed9_eba1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc),
                _ => (b ^ c ^ d, 0xca62_c1d6),
            };
            let temp = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(word);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = temp;
        }
        for (state, v) in h.iter_mut().zip([a, b, c, d, e]) {
            *state = state.wrapping_add(v);
        }
    }
    let mut out = [0u8; 20];
    for (chunk, v) in out.chunks_exact_mut(4).zip(h) {
        chunk.copy_from_slice(&v.to_be_bytes());
    }
    out
}

/// The handler of a [`LyingServer`].
type Handler = dyn Fn(&[Vec<u8>]) -> Reply + Send + Sync;

/// What the accept thread and the connection threads share with the [`LyingServer`].
struct Shared {
    handler: Box<Handler>,
    stop: AtomicBool,
    commands: Mutex<Vec<Vec<Vec<u8>>>>,
    /// The open connections (a clone of each stream, to shut it down on drop), by number.
    connections: Mutex<Vec<(u64, TcpStream)>>,
    accepted: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A RESP server on 127.0.0.1 whose replies a test decides (see the module docs). Stopped
/// on drop: the listener is closed and every connection shut down.
pub struct LyingServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for LyingServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LyingServer")
            .field("addr", &self.addr)
            .field("accepted", &self.accepted())
            .finish_non_exhaustive()
    }
}

impl LyingServer {
    /// Listens on 127.0.0.1 at a free port; each connection is served on its own thread,
    /// calling `handler` with every command's arguments (`args[0]`, the command name,
    /// upper-cased in ASCII; the other arguments as sent). Inline commands (`PING\r\n`) are
    /// accepted as Redis accepts them.
    ///
    /// # Panics
    /// If no port can be bound or no thread started.
    pub fn start<H>(handler: H) -> LyingServer
    where
        H: Fn(&[Vec<u8>]) -> Reply + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port on 127.0.0.1");
        let addr = listener.local_addr().expect("the listener's address");
        let shared = Arc::new(Shared {
            handler: Box::new(handler),
            stop: AtomicBool::new(false),
            commands: Mutex::new(Vec::new()),
            connections: Mutex::new(Vec::new()),
            accepted: AtomicU64::new(0),
        });
        let accept = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("lying-server-accept".into())
                .spawn(move || accept_loop(&listener, &shared))
                .expect("the accept thread starts")
        };
        LyingServer {
            addr,
            shared,
            accept: Some(accept),
        }
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `redis://127.0.0.1:port/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port())
    }

    /// Every command received so far, of every connection, in the order they were read
    /// (`args[0]` upper-cased, as the handler got them).
    pub fn commands(&self) -> Vec<Vec<Vec<u8>>> {
        lock(&self.shared.commands).clone()
    }

    /// The names of the commands received so far (`args[0]`, lossy UTF-8), in order.
    pub fn command_names(&self) -> Vec<String> {
        lock(&self.shared.commands)
            .iter()
            .map(|c| String::from_utf8_lossy(c.first().map_or(&[][..], Vec::as_slice)).into_owned())
            .collect()
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for LyingServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept thread, which sees `stop` and ends (closing the listener).
        let _ = TcpStream::connect(self.addr);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        // The connection threads end at their next read, write or sleep.
        for (_, stream) in lock(&self.shared.connections).drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let number = shared.accepted.fetch_add(1, Ordering::SeqCst);
        let Ok(clone) = stream.try_clone() else {
            continue;
        };
        lock(&shared.connections).push((number, clone));
        let shared = Arc::clone(shared);
        // A connection whose thread cannot start is closed with its stream.
        let _ = std::thread::Builder::new()
            .name(format!("lying-server-conn-{number}"))
            .spawn(move || {
                serve(stream, &shared);
                lock(&shared.connections).retain(|(n, _)| *n != number);
            });
    }
}

/// The next command of a connection: `Ok(None)` at the end of the stream; empty inline
/// lines and empty arrays are skipped, as Redis does.
fn read_command(reader: &mut impl BufRead) -> io::Result<Option<Vec<Vec<u8>>>> {
    loop {
        let first = match reader.fill_buf()?.first() {
            None => return Ok(None),
            Some(&b) => b,
        };
        let mut args = if first == b'*' {
            let Some(value) = resp::read_value(reader)? else {
                return Ok(None);
            };
            match value {
                Value::Array(items) => items
                    .into_iter()
                    .map(|item| match item {
                        Value::Bulk(bytes) => Ok(bytes),
                        _ => Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "expected '$', got something else",
                        )),
                    })
                    .collect::<io::Result<Vec<_>>>()?,
                _ => Vec::new(),
            }
        } else {
            let Some(line) = resp::read_line(reader)? else {
                return Ok(None);
            };
            line.split(u8::is_ascii_whitespace)
                .filter(|word| !word.is_empty())
                .map(<[u8]>::to_vec)
                .collect()
        };
        if let Some(name) = args.first_mut() {
            name.make_ascii_uppercase();
            return Ok(Some(args));
        }
    }
}

/// Sleeps `time` in short steps; `false` if the server was stopped meanwhile.
fn sleep(time: Duration, shared: &Shared) -> bool {
    let end = Instant::now() + time;
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(10)));
    }
}

/// Sends `reply`; `Ok(false)` when the connection is to be closed.
fn send(stream: &mut TcpStream, reply: &Reply, shared: &Shared) -> io::Result<bool> {
    match reply {
        Reply::Raw(bytes) => stream.write_all(bytes)?,
        Reply::Delayed(delay, inner) => {
            if !sleep(*delay, shared) {
                return Ok(false);
            }
            return send(stream, inner, shared);
        }
        Reply::Trickle { bytes, gap } => {
            for (i, byte) in bytes.iter().enumerate() {
                if i > 0 && !sleep(*gap, shared) {
                    return Ok(false);
                }
                stream.write_all(std::slice::from_ref(byte))?;
            }
        }
        Reply::Endless { head, fill } => {
            stream.write_all(head)?;
            let mut chunk = Vec::new();
            while !fill.is_empty() && chunk.len() < 64 << 10 {
                chunk.extend_from_slice(fill);
            }
            while !chunk.is_empty() && !shared.stop.load(Ordering::SeqCst) {
                stream.write_all(&chunk)?;
            }
            return Ok(chunk.is_empty());
        }
        Reply::Close => return Ok(false),
        Reply::Silent => {}
    }
    Ok(true)
}

fn serve(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while !shared.stop.load(Ordering::SeqCst) {
        let args = match read_command(&mut reader) {
            Ok(Some(args)) => args,
            Ok(None) => break,
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                let reply = Reply::error(&format!("ERR Protocol error: {e}"));
                let _ = writer.write_all(&reply.to_bytes());
                break;
            }
            Err(_) => break,
        };
        lock(&shared.commands).push(args.clone());
        let reply = (shared.handler)(&args);
        match send(&mut writer, &reply, shared) {
            Ok(true) => {}
            Ok(false) | Err(_) => break,
        }
    }
    let _ = writer.shutdown(Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_matches_the_standard_vectors() {
        assert_eq!(sha1_hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            sha1_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        assert_eq!(
            sha1_hex(&[b'a'; 1_000]),
            "291e9a6c66994949b57ba5e650361e98fc36b1ba"
        );
    }

    #[test]
    fn commands_are_parsed_from_a_stream() {
        let bytes = b"*2\r\n$3\r\nget\r\n$1\r\nk\r\n\r\nping  x\r\n*0\r\n*1\r\n$4\r\nQUIT\r\n";
        let mut r = BufReader::new(&bytes[..]);
        let names: Vec<Vec<Vec<u8>>> =
            std::iter::from_fn(|| read_command(&mut r).unwrap()).collect();
        assert_eq!(
            names,
            vec![
                vec![b"GET".to_vec(), b"k".to_vec()],
                vec![b"PING".to_vec(), b"x".to_vec()],
                vec![b"QUIT".to_vec()],
            ]
        );
        let bad: &[&[u8]] = &[b"*1\r\n:1\r\n", b"*1\r\n*1\r\n$1\r\na\r\n", b"*x\r\n"];
        for b in bad {
            assert!(read_command(&mut BufReader::new(*b)).is_err());
        }
    }

    #[test]
    fn default_replies_answer_connection_setup() {
        let args = |a: &[&str]| a.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>();
        assert_eq!(default_reply(&args(&["PING"])), Some(Reply::simple("PONG")));
        assert_eq!(
            default_reply(&args(&["PING", "hi"])),
            Some(Reply::bulk(b"hi"))
        );
        assert_eq!(
            default_reply(&args(&["CLIENT", "SETINFO", "LIB-NAME", "x"])),
            Some(Reply::ok())
        );
        assert!(default_reply(&args(&["HELLO", "3"]))
            .unwrap()
            .to_bytes()
            .starts_with(b"-ERR unknown command"));
        assert_eq!(
            default_reply(&args(&["SCRIPT", "load", "return 1"])),
            Some(Reply::bulk(b"e0e1f9fabfc9d4800c877a703b823ac0578ff8db"))
        );
        assert_eq!(default_reply(&args(&["GET", "k"])), None);
        assert_eq!(default_reply(&[]), None);
    }
}
