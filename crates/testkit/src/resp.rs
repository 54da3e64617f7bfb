//! RESP2, the Redis wire protocol, as far as the test harnesses need it: [`Value`], a reply
//! read whole by [`read_value`] (nested arrays included), and [`encode_command`], a command
//! as a client sends it.
//!
//! The reader is meant for bytes from anyone, a real server or a hostile client: it bounds
//! every line (64 KiB), bulk string (512 MiB, and never allocates ahead of the bytes that
//! actually arrive), array and nesting depth, and reports malformed input as an
//! [`std::io::ErrorKind::InvalidData`] error, never a panic.

use std::io::{self, BufRead, Read};

/// The longest line (a simple string, an error, a number, an inline command) read.
pub const MAX_LINE: usize = 64 * 1024;
/// The longest bulk string read (Redis's own `proto-max-bulk-len` default).
pub const MAX_BULK: usize = 512 * 1024 * 1024;
/// The most elements of one array read (Redis's limit on a command's arguments).
pub const MAX_ARRAY: usize = 1024 * 1024;
/// The deepest nesting of arrays read.
pub const MAX_DEPTH: usize = 32;

/// One RESP2 value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `+text`: a status reply (`OK`, `PONG`).
    Simple(String),
    /// `-text`: an error reply, with its code (`ERR ...`, `MOVED 3999 127.0.0.1:7002`).
    Error(String),
    /// `:n`: an integer.
    Int(i64),
    /// `$len` and the bytes: a bulk string.
    Bulk(Vec<u8>),
    /// `$-1` or `*-1`: no value.
    Nil,
    /// `*len` and the elements.
    Array(Vec<Value>),
}

impl Value {
    /// The text of a simple string or of a bulk string that is UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Simple(s) => Some(s),
            Value::Bulk(b) => std::str::from_utf8(b).ok(),
            _ => None,
        }
    }

    /// The integer of an integer reply, or of a simple or bulk string holding one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => self.as_str()?.parse().ok(),
        }
    }

    /// The elements of an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Whether this is an error reply.
    pub fn is_error(&self) -> bool {
        matches!(self, Value::Error(_))
    }
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// One line without its `\r\n` (a lone `\n` is accepted, as Redis does for inline commands).
/// `Ok(None)` at the end of the stream before any byte of the line.
pub(crate) fn read_line(r: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    let n = r
        .by_ref()
        .take(MAX_LINE as u64 + 2)
        .read_until(b'\n', &mut line)?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        return Err(if n > MAX_LINE {
            invalid("line too long")
        } else {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the stream ended inside a line",
            )
        });
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(line))
}

fn parse_int(bytes: &[u8]) -> io::Result<i64> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            invalid(format!(
                "not a number: {:?}",
                String::from_utf8_lossy(bytes)
            ))
        })
}

/// A length (`$n`, `*n`): `None` for `-1`, an error beyond `max` or below `-1`.
fn parse_len(bytes: &[u8], max: usize) -> io::Result<Option<usize>> {
    match parse_int(bytes)? {
        -1 => Ok(None),
        n if n < 0 => Err(invalid(format!("negative length {n}"))),
        n => match usize::try_from(n) {
            Ok(n) if n <= max => Ok(Some(n)),
            _ => Err(invalid(format!("length {n} over the limit {max}"))),
        },
    }
}

/// Reads one whole value (an array with all its elements). `Ok(None)` when the stream ends
/// cleanly before the value starts.
///
/// # Errors
/// The stream's errors; `UnexpectedEof` when it ends inside a value; `InvalidData` for
/// bytes that are not RESP2 or exceed the limits of the module docs.
pub fn read_value(r: &mut impl BufRead) -> io::Result<Option<Value>> {
    read_nested(r, 0)
}

fn read_nested(r: &mut impl BufRead, depth: usize) -> io::Result<Option<Value>> {
    if depth > MAX_DEPTH {
        return Err(invalid("arrays nested too deep"));
    }
    let Some(line) = read_line(r)? else {
        return Ok(None);
    };
    let Some((&kind, rest)) = line.split_first() else {
        return Err(invalid("an empty line where a value was expected"));
    };
    let text = || String::from_utf8_lossy(rest).into_owned();
    let value = match kind {
        b'+' => Value::Simple(text()),
        b'-' => Value::Error(text()),
        b':' => Value::Int(parse_int(rest)?),
        b'$' => match parse_len(rest, MAX_BULK)? {
            None => Value::Nil,
            Some(len) => {
                let mut body = Vec::new();
                r.by_ref().take(len as u64 + 2).read_to_end(&mut body)?;
                if body.len() < len + 2 {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the stream ended inside a bulk string",
                    ));
                }
                if body[len..] != *b"\r\n" {
                    return Err(invalid("a bulk string not followed by \\r\\n"));
                }
                body.truncate(len);
                Value::Bulk(body)
            }
        },
        b'*' => match parse_len(rest, MAX_ARRAY)? {
            None => Value::Nil,
            Some(len) => {
                let mut items = Vec::with_capacity(len.min(1024));
                for _ in 0..len {
                    match read_nested(r, depth + 1)? {
                        Some(v) => items.push(v),
                        None => {
                            return Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                "the stream ended inside an array",
                            ))
                        }
                    }
                }
                Value::Array(items)
            }
        },
        other => {
            return Err(invalid(format!(
                "unknown reply type {:?}",
                char::from(other)
            )))
        }
    };
    Ok(Some(value))
}

/// A command as clients send it: an array of bulk strings.
pub fn encode_command<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        let a = a.as_ref();
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> io::Result<Option<Value>> {
        read_value(&mut io::BufReader::new(bytes))
    }

    #[test]
    fn reads_every_kind_of_value() {
        let bytes = b"*6\r\n+OK\r\n-ERR no\r\n:-42\r\n$3\r\na\r\n\r\n$-1\r\n*1\r\n*0\r\n";
        assert_eq!(
            read(bytes).unwrap(),
            Some(Value::Array(vec![
                Value::Simple("OK".into()),
                Value::Error("ERR no".into()),
                Value::Int(-42),
                Value::Bulk(b"a\r\n".to_vec()),
                Value::Nil,
                Value::Array(vec![Value::Array(vec![])]),
            ]))
        );
        assert_eq!(read(b"").unwrap(), None);
        assert_eq!(
            read(&encode_command(&["GET", "k"])).unwrap(),
            Some(Value::Array(vec![
                Value::Bulk(b"GET".to_vec()),
                Value::Bulk(b"k".to_vec())
            ]))
        );
    }

    #[test]
    fn rejects_malformed_input_without_panicking() {
        let cases: &[&[u8]] = &[
            b"?\r\n",
            b"\r\n",
            b":12x\r\n",
            b"$-2\r\n",
            b"$99999999999999999999\r\n",
            b"$3\r\nab",
            b"$3\r\nabcde",
            b"*2\r\n:1\r\n",
            b"*-7\r\n",
            b"+no end",
            &[b'*'; 200],
        ];
        for case in cases {
            assert!(read(case).is_err(), "{:?}", String::from_utf8_lossy(case));
        }
        let deep: Vec<u8> = b"*1\r\n".repeat(MAX_DEPTH + 2);
        assert!(read(&deep).is_err());
        let long = vec![b'+'; MAX_LINE + 10];
        assert!(read(&long).is_err());
    }
}
