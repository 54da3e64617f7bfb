//! The single-server harness: replies read whole or as a first line, a password-protected
//! server, stop and restart.

use bloomkit_testkit::redis_server::RedisServer;
use bloomkit_testkit::resp::Value;

#[test]
fn replies_are_read_whole_or_as_their_first_line() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    assert_eq!(server.command(&["SET", "k", "v\r\nw"]), "+OK");
    assert_eq!(server.command(&["GET", "k"]), "v\r\nw");
    assert_eq!(server.command(&["GET", "missing"]), "$-1");
    assert_eq!(server.command(&["DBSIZE"]), ":1");
    assert!(server
        .command(&["NOPE"])
        .starts_with("-ERR unknown command"));
    server.command(&["RPUSH", "l", "a", "b"]);
    assert_eq!(server.command(&["LRANGE", "l", "0", "-1"]), "*2");
    assert_eq!(
        server.query(&["LRANGE", "l", "0", "-1"]),
        Value::Array(vec![Value::Bulk(b"a".to_vec()), Value::Bulk(b"b".to_vec())])
    );
    assert_eq!(
        server
            .query(&["ROLE"])
            .as_array()
            .and_then(|a| a[0].as_str()),
        Some("master")
    );
}

#[test]
fn a_password_protected_server_starts_and_restarts_empty() {
    let Some(mut server) = RedisServer::start(&["--requirepass", "s3cret"]) else {
        return;
    };
    assert!(matches!(server.query(&["GET", "k"]), Value::Error(e) if e.starts_with("NOAUTH")));
    let pid = server.pid();
    server.stop();
    assert!(server.is_stopped());
    server.restart();
    assert!(!server.is_stopped());
    assert_ne!(server.pid(), pid);
    assert!(server.query(&["PING"]).is_error());
}
