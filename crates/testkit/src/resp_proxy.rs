//! A tampering proxy: it stands between a client and a real Redis server on 127.0.0.1,
//! passes every command through as sent, and tampers with the replies coming back as a
//! broken proxy or network would: replays, drops, duplicates, truncates, reorders or
//! injects them. The server is real; only the path to it lies.
//!
//! ```no_run
//! use bloomkit_testkit::resp_proxy::{Tamper, TamperingProxy};
//!
//! // The 5th reply on the proxy's first connection is sent twice.
//! let proxy = TamperingProxy::start(6379, Tamper::Duplicate, 4);
//! println!("{}", proxy.url());
//! ```

use std::io::{self, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::resp::{self, Value};
use crate::resp_server::Reply;

/// What the proxy does to one reply (the reply `at`, counted from 0 over all the replies the
/// proxy carries, on every connection).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tamper {
    /// Sends it, then the four replies before it and it again (a proxy that replays what it
    /// sent after a reconnect).
    Replay,
    /// Never sends it.
    Drop,
    /// Sends it twice.
    Duplicate,
    /// Sends it one element short (an array) or one byte short (a bulk string); any other
    /// reply becomes an empty array.
    Truncate,
    /// Sends the reply after it first, then it.
    Reorder,
    /// Sends this value before it.
    Inject(Value),
    /// Sends it a byte at a time, this long apart (a link that barely moves).
    Trickle(std::time::Duration),
    /// Sends, in its place, this start of a reply and then bytes that never end (`x` for a
    /// bulk string's head, `:1\r\n` for an array's), until the client goes away.
    Endless(Vec<u8>),
}

impl Tamper {
    /// Every kind of tampering, with `n` choosing the injected value.
    pub fn all(n: usize) -> Vec<Tamper> {
        let injected = [
            Value::Int(0),
            Value::Nil,
            Value::Simple("OK".into()),
            Value::Bulk(vec![0; 8]),
            Value::Array(vec![Value::Int(1)]),
        ];
        vec![
            Tamper::Replay,
            Tamper::Drop,
            Tamper::Duplicate,
            Tamper::Truncate,
            Tamper::Reorder,
            Tamper::Inject(injected[n % injected.len()].clone()),
        ]
    }
}

struct Shared {
    upstream: u16,
    tamper: Tamper,
    at: u64,
    /// Replies carried so far, over all connections.
    seen: AtomicU64,
    stop: AtomicBool,
    streams: Mutex<Vec<TcpStream>>,
}

/// The proxy: listens on 127.0.0.1 at a free port, one upstream connection to the server
/// per client connection. Stops (closing every connection) when dropped.
pub struct TamperingProxy {
    port: u16,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for TamperingProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TamperingProxy")
            .field("port", &self.port)
            .field("tamper", &self.shared.tamper)
            .field("at", &self.shared.at)
            .finish_non_exhaustive()
    }
}

impl TamperingProxy {
    /// A proxy to the server at `127.0.0.1:upstream` that does `tamper` to reply `at`.
    ///
    /// # Panics
    /// If no port can be bound or no thread started.
    pub fn start(upstream: u16, tamper: Tamper, at: u64) -> TamperingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port on 127.0.0.1");
        let port = listener
            .local_addr()
            .expect("the listener's address")
            .port();
        let shared = Arc::new(Shared {
            upstream,
            tamper,
            at,
            seen: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            streams: Mutex::new(Vec::new()),
        });
        let accept = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("tampering-proxy".into())
                .spawn(move || {
                    for client in listener.incoming() {
                        if shared.stop.load(Ordering::SeqCst) {
                            return;
                        }
                        let Ok(client) = client else { continue };
                        let shared = Arc::clone(&shared);
                        let _ = std::thread::Builder::new()
                            .name("tampering-proxy-conn".into())
                            .spawn(move || {
                                let _ = carry(client, &shared);
                            });
                    }
                })
                .expect("the accept thread starts")
        };
        TamperingProxy {
            port,
            shared,
            accept: Some(accept),
        }
    }

    /// The proxy's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Replies carried so far (the tampered one counts once).
    pub fn replies(&self) -> u64 {
        self.shared.seen.load(Ordering::SeqCst)
    }

    /// Whether the reply `at` has come by (and was tampered with).
    pub fn tampered(&self) -> bool {
        self.replies() > self.shared.at
    }
}

impl Drop for TamperingProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for s in self
            .shared
            .streams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
        {
            let _ = s.shutdown(Shutdown::Both);
        }
        // Wake the accept loop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

/// Carries one client connection: commands up as they are, replies down through the tamper.
fn carry(client: TcpStream, shared: &Shared) -> io::Result<()> {
    let server = TcpStream::connect(("127.0.0.1", shared.upstream))?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    {
        let mut streams = shared
            .streams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        streams.push(client.try_clone()?);
        streams.push(server.try_clone()?);
    }
    let mut up_from = client.try_clone()?;
    let mut up_to = server.try_clone()?;
    let up = std::thread::spawn(move || {
        let _ = io::copy(&mut up_from, &mut up_to);
        let _ = up_to.shutdown(Shutdown::Write);
    });
    let mut down = client;
    let mut replies = BufReader::new(server);
    let mut recent: Vec<Value> = Vec::new();
    let mut held: Option<Value> = None;
    while let Some(value) = resp::read_value(&mut replies)? {
        let n = shared.seen.fetch_add(1, Ordering::SeqCst);
        let mut out = Vec::new();
        if let Some(h) = held.take() {
            out.push(value.clone());
            out.push(h);
        } else if n == shared.at {
            match &shared.tamper {
                Tamper::Replay => {
                    out.push(value.clone());
                    let from = recent.len().saturating_sub(4);
                    out.extend(recent[from..].iter().cloned());
                    out.push(value.clone());
                }
                Tamper::Drop => {}
                Tamper::Duplicate => {
                    out.push(value.clone());
                    out.push(value.clone());
                }
                Tamper::Truncate => out.push(match &value {
                    Value::Array(items) if !items.is_empty() => {
                        Value::Array(items[..items.len() - 1].to_vec())
                    }
                    Value::Bulk(b) if !b.is_empty() => Value::Bulk(b[..b.len() - 1].to_vec()),
                    _ => Value::Array(Vec::new()),
                }),
                Tamper::Reorder => held = Some(value.clone()),
                Tamper::Inject(v) => {
                    out.push(v.clone());
                    out.push(value.clone());
                }
                Tamper::Trickle(gap) => {
                    for byte in Reply::value(&value).to_bytes() {
                        if shared.stop.load(Ordering::SeqCst) {
                            return Ok(());
                        }
                        down.write_all(&[byte])?;
                        std::thread::sleep(*gap);
                    }
                }
                Tamper::Endless(head) => {
                    down.write_all(head)?;
                    let fill: &[u8] = if head.first() == Some(&b'*') {
                        b":1\r\n"
                    } else {
                        b"x"
                    };
                    let chunk = fill.repeat((64 << 10) / fill.len());
                    while !shared.stop.load(Ordering::SeqCst) {
                        down.write_all(&chunk)?;
                    }
                    return Ok(());
                }
            }
        } else {
            out.push(value.clone());
        }
        recent.push(value);
        if recent.len() > 8 {
            recent.remove(0);
        }
        let mut bytes = Vec::new();
        for v in &out {
            bytes.extend(Reply::value(v).to_bytes());
        }
        down.write_all(&bytes)?;
    }
    let _ = down.shutdown(Shutdown::Both);
    let _ = up.join();
    Ok(())
}
