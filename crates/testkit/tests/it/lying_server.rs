//! The lying RESP server against a plain `TcpStream` client: pipelined replies in order,
//! delays and trickles that take the time they say, silence, closed connections, and
//! malformed input answered without a panic.

use std::io::{BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bloomkit_testkit::redis_server::RedisServer;
use bloomkit_testkit::resp::{encode_command, read_value, Value};
use bloomkit_testkit::resp_server::{default_reply, sha1_hex, LyingServer, Reply};

fn handler(args: &[Vec<u8>]) -> Reply {
    match args[0].as_slice() {
        b"GET" => Reply::bulk(&args[1]),
        b"INCR" => Reply::int(42),
        b"SLOW" => Reply::ok().after(Duration::from_millis(300)),
        b"DRIP" => Reply::bulk(b"drip").trickled(Duration::from_millis(40)),
        b"MUTE" => Reply::Silent,
        b"BYE" => Reply::Close,
        b"LIST" => Reply::array(vec![Reply::int(1), Reply::nil(), Reply::bulk(b"x")]),
        b"BROKEN" => Reply::Raw(b"$5\r\nab".to_vec()),
        _ => default_reply(args).unwrap_or_else(|| Reply::error("ERR unknown")),
    }
}

fn client(server: &LyingServer) -> (TcpStream, BufReader<TcpStream>) {
    let stream = TcpStream::connect(server.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let reader = BufReader::new(stream.try_clone().unwrap());
    (stream, reader)
}

fn reply(reader: &mut BufReader<TcpStream>) -> Value {
    read_value(reader).unwrap().expect("a reply")
}

#[test]
fn pipelined_commands_get_their_replies_in_order() {
    let server = LyingServer::start(handler);
    let (mut stream, mut reader) = client(&server);
    let mut pipeline = encode_command(&["get", "a"]);
    pipeline.extend(encode_command(&["INCR", "n"]));
    pipeline.extend(encode_command(&["LIST"]));
    stream.write_all(&pipeline).unwrap();
    assert_eq!(reply(&mut reader), Value::Bulk(b"a".to_vec()));
    assert_eq!(reply(&mut reader), Value::Int(42));
    assert_eq!(
        reply(&mut reader),
        Value::Array(vec![Value::Int(1), Value::Nil, Value::Bulk(b"x".to_vec())])
    );
    // Inline commands too, and the connection-setup answers.
    stream.write_all(b"PING\r\nCLIENT SETNAME me\r\n").unwrap();
    assert_eq!(reply(&mut reader), Value::Simple("PONG".into()));
    assert_eq!(reply(&mut reader), Value::Simple("OK".into()));
    assert_eq!(
        server.command_names(),
        ["GET", "INCR", "LIST", "PING", "CLIENT"]
    );
    assert_eq!(
        server.commands()[0],
        vec![b"GET".to_vec(), b"a".to_vec()],
        "the name upper-cased, the arguments as sent"
    );
}

#[test]
fn delayed_and_trickled_replies_take_the_time_they_say() {
    let server = LyingServer::start(handler);
    let (mut stream, mut reader) = client(&server);

    let t = Instant::now();
    stream.write_all(&encode_command(&["SLOW"])).unwrap();
    assert_eq!(reply(&mut reader), Value::Simple("OK".into()));
    let slow = t.elapsed();
    assert!(slow >= Duration::from_millis(300), "{slow:?}");
    assert!(slow < Duration::from_secs(3), "{slow:?}");

    // "$4\r\ndrip\r\n" is 10 bytes: 9 gaps of 40 ms.
    let t = Instant::now();
    stream.write_all(&encode_command(&["DRIP"])).unwrap();
    let mut first = [0u8; 16];
    let n = stream.read(&mut first).unwrap();
    assert!(n < 4, "a trickle sends a byte at a time, got {n} at once");
    let mut rest = vec![0u8; 10 - n];
    let mut raw = stream.try_clone().unwrap();
    raw.read_exact(&mut rest).unwrap();
    let drip = t.elapsed();
    let mut all = first[..n].to_vec();
    all.extend(rest);
    assert_eq!(all, b"$4\r\ndrip\r\n");
    assert!(drip >= Duration::from_millis(9 * 40), "{drip:?}");
    assert!(drip < Duration::from_secs(3), "{drip:?}");

    // A delayed reply holds back the pipelined replies behind it.
    let t = Instant::now();
    let mut pipeline = encode_command(&["SLOW"]);
    pipeline.extend(encode_command(&["PING"]));
    stream.write_all(&pipeline).unwrap();
    assert_eq!(reply(&mut reader), Value::Simple("OK".into()));
    assert_eq!(reply(&mut reader), Value::Simple("PONG".into()));
    assert!(t.elapsed() >= Duration::from_millis(300));
}

#[test]
fn silence_sends_nothing_and_close_closes() {
    let server = LyingServer::start(handler);
    let (mut stream, mut reader) = client(&server);
    stream.write_all(&encode_command(&["MUTE"])).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut byte = [0u8; 1];
    let err = stream.read(&mut byte).expect_err("nothing to read");
    assert!(
        matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{err:?}"
    );
    // The connection goes on: the next command is answered.
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream.write_all(&encode_command(&["PING"])).unwrap();
    assert_eq!(reply(&mut reader), Value::Simple("PONG".into()));

    stream.write_all(&encode_command(&["BYE"])).unwrap();
    assert_eq!(read_value(&mut reader).unwrap(), None, "closed");

    // A truncated reply, then the connection stays open: the client sees a partial value.
    let (mut stream, mut reader) = client(&server);
    stream.write_all(&encode_command(&["BROKEN"])).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    assert!(read_value(&mut reader).is_err());
    assert_eq!(server.accepted(), 2);
}

#[test]
fn malformed_input_gets_a_protocol_error_and_the_server_goes_on() {
    let server = LyingServer::start(handler);
    let garbage: &[&[u8]] = &[
        b"*2\r\n$3\r\nGET\r\n:7\r\n",
        b"*99999999999\r\n",
        b"*1\r\n$-5\r\n",
        b"*1\r\n$3\r\nabcdef\r\n",
        &[0xff; 100_000],
    ];
    for bytes in garbage {
        let (mut stream, mut reader) = client(&server);
        let _ = stream.write_all(bytes);
        match read_value(&mut reader) {
            Ok(Some(Value::Error(e))) => assert!(e.starts_with("ERR Protocol error"), "{e}"),
            // The server closed with the rest of a long line unread: the kernel may reset
            // the connection before the client reads the error, as with Redis.
            Err(e) if bytes.len() > 64 * 1024 && e.kind() == ErrorKind::ConnectionReset => {}
            other => panic!("{other:?}"),
        }
        assert!(matches!(read_value(&mut reader), Ok(None) | Err(_)));
    }
    // Half a command, then the client hangs up.
    let (mut stream, _) = client(&server);
    stream.write_all(b"*2\r\n$3\r\nGET").unwrap();
    drop(stream);
    let (mut stream, mut reader) = client(&server);
    stream.write_all(&encode_command(&["PING"])).unwrap();
    assert_eq!(reply(&mut reader), Value::Simple("PONG".into()));
}

#[test]
fn dropping_the_server_closes_its_port_and_connections() {
    let server = LyingServer::start(handler);
    let addr = server.addr();
    let (mut stream, mut reader) = client(&server);
    stream.write_all(&encode_command(&["MUTE"])).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    drop(server);
    assert!(matches!(read_value(&mut reader), Ok(None) | Err(_)));
    assert!(TcpStream::connect(addr).is_err(), "still listening");
}

#[test]
fn script_load_names_scripts_as_redis_does() {
    let script = "return redis.call('GET', KEYS[1])";
    let server = LyingServer::start(handler);
    let (mut stream, mut reader) = client(&server);
    stream
        .write_all(&encode_command(&["SCRIPT", "LOAD", script]))
        .unwrap();
    let Value::Bulk(sha) = reply(&mut reader) else {
        panic!("a bulk reply");
    };
    assert_eq!(String::from_utf8(sha).unwrap(), sha1_hex(script.as_bytes()));
    let Some(redis) = RedisServer::start(&[]) else {
        return;
    };
    assert_eq!(
        redis.query(&["SCRIPT", "LOAD", script]),
        Value::Bulk(sha1_hex(script.as_bytes()).into_bytes())
    );
}
