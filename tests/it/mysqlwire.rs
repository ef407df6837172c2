//! The lean MySQL client (src/db/mysqlwire) against the real MariaDB: the values and row
//! counts it returns equal what mysql_async returns for the same statements (NULLs, dates,
//! times, unsigned and negative integers, decimals, multi-byte strings), errors are classified
//! and leave the connection usable, multi-statement text works, and packets over 16 MB are
//! split and joined. Also over TCP.

use crate::common::*;
use enginebench::db::mysql::MysqlConn;
use enginebench::db::mysqlwire::WireConn;
use enginebench::db::{Conn, ErrorClass, Value};

fn with_driver(url: &str, driver: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}driver={driver}")
}

async fn wire(url: &str) -> WireConn {
    match WireConn::connect(&spec(url)).await {
        Ok(c) => c,
        Err(_) => panic!("the lean client must connect to the test server"),
    }
}

const SETUP: &str = "DROP TABLE IF EXISTS t;
CREATE TABLE t (
  id INT PRIMARY KEY, i INT, u BIGINT UNSIGNED, s VARCHAR(50) CHARACTER SET utf8mb4,
  d DATE, dt DATETIME(6), tm TIME, dec_ DECIMAL(10,3), ti TINYINT, sm SMALLINT, b BLOB
);
INSERT INTO t VALUES
  (1, -5, 18446744073709551615, 'héllo wörld', '2001-02-03', '2001-02-03 04:05:06.789000', '-838:59:59', -12.5, -128, 32767, x'00ff'),
  (2, NULL, 0, '日本語 ✓ 🚀', '1970-01-01', '1999-12-31 23:59:59.000001', '12:00:00', 0.001, 127, -32768, ''),
  (3, 2147483647, 42, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (4, -2147483648, 7, '', '9999-12-31', '2020-01-01 00:00:00', '00:00:00', 9999999.999, 0, 0, 'x')";

const COLS: &str = "id, i, u, s, d, dt, tm, dec_, ti, sm, HEX(b)";

fn check_same_as_mysql_async(url: &str) {
    let url = fresh_db(url, "eb_wire");
    block(async {
        let mut w = wire(&url).await;
        w.execute(SETUP).await.unwrap();
        let mut a = match Conn::connect(&spec(&with_driver(&url, "mysql_async"))).await {
            Ok(Conn::Mysql(c @ MysqlConn::Async(_))) => c,
            _ => panic!("driver=mysql_async gives a mysql_async connection"),
        };
        let all = format!("SELECT {COLS} FROM t ORDER BY id");
        let expected = a.query(&all).await.unwrap();
        assert_eq!(expected.len(), 4);
        // Text protocol through the lean client.
        assert_eq!(w.query(&all).await.unwrap(), expected);
        // Binary protocol: prepared, no parameters.
        let st = w.prepare(&all).await.unwrap();
        assert_eq!(w.exec_fetch(st, &[]).await.unwrap(), expected);
        assert_eq!(w.exec_rows(st, &[]).await.unwrap(), 4);
        // Parameters of every kind the workloads bind.
        let by = w
            .prepare(&format!(
                "SELECT {COLS} FROM t WHERE id >= ? AND (s = ? OR d = ? OR i <=> ?) ORDER BY id"
            ))
            .await
            .unwrap();
        let cases: Vec<(Vec<Value>, Vec<usize>)> = vec![
            (
                vec![
                    Value::Int(1),
                    Value::Text("日本語 ✓ 🚀".into()),
                    Value::Null,
                    Value::Null,
                ],
                vec![1],
            ),
            (
                vec![
                    Value::Int(0),
                    Value::Text("nope".into()),
                    Value::Date {
                        y: 2001,
                        m: 2,
                        d: 3,
                    },
                    Value::Int(2147483647),
                ],
                vec![0, 2],
            ),
            (
                vec![Value::Int(2), Value::Null, Value::Null, Value::Null],
                vec![1],
            ),
        ];
        for (params, rows) in cases {
            let got = w.exec_fetch(by, &params).await.unwrap();
            let want: Vec<_> = rows.iter().map(|&i| expected[i].clone()).collect();
            assert_eq!(got, want, "{params:?}");
            assert_eq!(w.exec_rows(by, &params).await.unwrap(), rows.len() as u64);
        }
        // Through the Conn API, as every workload uses it.
        let mut c = Conn::connect(&spec(&url)).await.unwrap();
        assert!(
            matches!(&c, Conn::Mysql(MysqlConn::Wire(_))),
            "wire by default"
        );
        let id = c.prepare("SELECT s FROM t WHERE id = ?").await.unwrap();
        for (k, n) in [(1, 1), (5, 0), (2, 1)] {
            assert_eq!(c.exec_rows(id, &[Value::Int(k)]).await.unwrap(), n);
        }
        assert_eq!(
            c.query_one("SELECT s FROM t WHERE id = 2").await.unwrap(),
            Some("日本語 ✓ 🚀".into())
        );
        // DML through a prepared statement: no result set, zero rows.
        let up = c.prepare("UPDATE t SET i = i WHERE id = ?").await.unwrap();
        assert_eq!(c.exec_rows(up, &[Value::Int(1)]).await.unwrap(), 0);
    });
}

#[test]
fn wire_values_equal_mysql_async_socket() {
    let Some(url) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    check_same_as_mysql_async(&url);
}

#[test]
fn wire_values_equal_mysql_async_tcp() {
    let Some(url) = server_url("EB_TEST_MYSQL_TCP_URL") else {
        return;
    };
    let _g = server_lock();
    check_same_as_mysql_async(&url);
}

#[test]
fn wire_errors_are_classified_and_connection_survives() {
    let Some(url) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&url, "eb_wire_err");
    block(async {
        let mut w = wire(&url).await;
        w.execute("CREATE TABLE k (id INT PRIMARY KEY); INSERT INTO k VALUES (1)")
            .await
            .unwrap();
        let e = w.execute("SELEC 1").await.unwrap_err();
        assert!(e.message.contains("1064"), "{}", e.message);
        assert_eq!(e.class, ErrorClass::Other);
        let ins = w.prepare("INSERT INTO k VALUES (?)").await.unwrap();
        let e = w.exec_rows(ins, &[Value::Int(1)]).await.unwrap_err();
        assert_eq!(e.class, ErrorClass::DuplicateKey, "{}", e.message);
        assert!(w.prepare("SELECT nope FROM k").await.is_err());
        // Wrong parameter count: refused before anything is sent.
        assert!(w.exec_rows(ins, &[]).await.is_err());
        // Still in sync with the server.
        assert_eq!(
            w.query("SELECT count(*) FROM k").await.unwrap(),
            vec![vec![Some("1".to_string())]]
        );
        assert_eq!(w.exec_rows(ins, &[Value::Int(2)]).await.unwrap(), 0);
    });
}

/// Payloads of 16 MB and more are split into several packets each way.
#[test]
fn wire_packets_over_16mb() {
    let Some(url) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&url, "eb_wire_big");
    block(async {
        let mut w = wire(&url).await;
        let old = w.query("SELECT @@global.max_allowed_packet").await.unwrap()[0][0]
            .clone()
            .unwrap();
        w.execute("SET GLOBAL max_allowed_packet = 67108864")
            .await
            .unwrap();
        // The new limit applies to new connections.
        let mut w2 = wire(&url).await;
        let big: String = "é".repeat(9_000_000); // 18 MB of UTF-8
        w2.execute("CREATE TABLE big (id INT PRIMARY KEY, v LONGTEXT CHARACTER SET utf8mb4)")
            .await
            .unwrap();
        let ins = w2.prepare("INSERT INTO big VALUES (?, ?)").await.unwrap();
        let r = w2
            .exec_rows(ins, &[Value::Int(1), Value::Text(big.clone())])
            .await;
        let sel = w2.prepare("SELECT v, LENGTH(v) FROM big").await;
        let got = match (r, sel) {
            (Ok(_), Ok(sel)) => w2.exec_fetch(sel, &[]).await,
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        w.execute(&format!("SET GLOBAL max_allowed_packet = {old}"))
            .await
            .unwrap();
        let got = got.unwrap();
        assert_eq!(got[0][1].as_deref(), Some("18000000"));
        assert!(got[0][0].as_deref() == Some(big.as_str()), "value differs");
    });
}

#[test]
fn wire_tcp_and_driver_option() {
    let Some(url) = server_url("EB_TEST_MYSQL_TCP_URL") else {
        return;
    };
    block(async {
        let c = Conn::connect(&spec(&url)).await.unwrap();
        assert!(matches!(c, Conn::Mysql(MysqlConn::Wire(_))));
        let c = Conn::connect(&spec(&with_driver(&url, "mysql_async")))
            .await
            .unwrap();
        assert!(matches!(c, Conn::Mysql(MysqlConn::Async(_))));
    });
    let bad = enginebench::db::TargetSpec::parse(&with_driver(&url, "odbc"), |_| None)
        .err()
        .unwrap_or_default();
    assert!(bad.contains("unknown driver 'odbc'"), "{bad}");
}

/// A user with a password: mysql_native_password through the lean client, over the socket and
/// TCP; a wrong password is AccessDenied and never shown.
#[test]
fn wire_password_authentication() {
    let (Some(sock), Some(tcp)) = (
        server_url("EB_TEST_MYSQL_URL"),
        server_url("EB_TEST_MYSQL_TCP_URL"),
    ) else {
        return;
    };
    let _g = server_lock();
    let pw = "Pw_wire_9x";
    block(async {
        let mut root = wire(&sock).await;
        root.execute(&format!(
            "DROP USER IF EXISTS 'ebpw'@'localhost', 'ebpw'@'127.0.0.1';
             CREATE USER 'ebpw'@'localhost' IDENTIFIED BY '{pw}';
             CREATE USER 'ebpw'@'127.0.0.1' IDENTIFIED BY '{pw}';
             GRANT SELECT ON *.* TO 'ebpw'@'localhost', 'ebpw'@'127.0.0.1'"
        ))
        .await
        .unwrap();
        for base in [&sock, &tcp] {
            let mut u = url::Url::parse(base).unwrap();
            u.set_username("ebpw").unwrap();
            u.set_password(Some(pw)).unwrap();
            let mut c = wire(u.as_str()).await;
            assert_eq!(
                c.query("SELECT CURRENT_USER()").await.unwrap()[0][0]
                    .as_deref()
                    .map(|s| s.starts_with("ebpw@")),
                Some(true)
            );
            u.set_password(Some("wrong_pw_123")).unwrap();
            let e = match WireConn::connect(&spec(u.as_str())).await {
                Err(enginebench::db::mysqlwire::ConnectError::Db(e)) => e,
                _ => panic!("a wrong password must fail"),
            };
            assert_eq!(e.class, ErrorClass::AccessDenied, "{}", e.message);
            assert!(!e.message.contains("wrong_pw_123"));
        }
        root.execute("DROP USER 'ebpw'@'localhost', 'ebpw'@'127.0.0.1'")
            .await
            .unwrap();
    });
}

/// A deferred BEGIN (`Conn::begin`) is written with the next statement: the statements still
/// run inside the transaction (a ROLLBACK undoes them), Com_begin counts one BEGIN per
/// transaction, an error of the first statement comes back from that statement and leaves the
/// connection in step, and `?begin=separate` sends it alone.
#[test]
fn wire_deferred_begin() {
    let Some(url) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&url, "eb_wire_begin");
    block(async {
        for (mode, deferred) in [("pipelined", true), ("separate", false)] {
            let sep = if url.contains('?') { '&' } else { '?' };
            let mut c = Conn::connect(&spec(&format!("{url}{sep}begin={mode}")))
                .await
                .unwrap();
            c.execute("DROP TABLE IF EXISTS k; CREATE TABLE k (id INT PRIMARY KEY) ENGINE=InnoDB")
                .await
                .unwrap();
            let ins = c.prepare("INSERT INTO k VALUES (?)").await.unwrap();
            let begins = |rows: Vec<Vec<Option<String>>>| -> i64 {
                rows[0][1].as_deref().unwrap().parse().unwrap()
            };
            let b0 = begins(
                c.query("SHOW SESSION STATUS LIKE 'Com_begin'")
                    .await
                    .unwrap(),
            );
            c.begin("START TRANSACTION").await.unwrap();
            if let Conn::Mysql(enginebench::db::mysql::MysqlConn::Wire(w)) = &c {
                assert_eq!(w.pipeline_begin, deferred);
            } else {
                panic!("the lean client");
            }
            assert_eq!(c.exec_rows(ins, &[Value::Int(1)]).await.unwrap(), 0);
            c.execute("ROLLBACK").await.unwrap();
            let n = c.query_one("SELECT count(*) FROM k").await.unwrap();
            assert_eq!(
                n.as_deref(),
                Some("0"),
                "{mode}: the insert ran inside the transaction"
            );
            // The first statement fails: its error, then the connection is still in step.
            c.execute("INSERT INTO k VALUES (5)").await.unwrap();
            c.begin("START TRANSACTION").await.unwrap();
            let e = c.exec_rows(ins, &[Value::Int(5)]).await.unwrap_err();
            assert_eq!(e.class, ErrorClass::DuplicateKey, "{}", e.message);
            c.execute("ROLLBACK").await.unwrap();
            // BEGIN then COMMIT with nothing between (the COMMIT carries the BEGIN).
            c.begin("START TRANSACTION").await.unwrap();
            c.execute("COMMIT").await.unwrap();
            // BEGIN deferred, then a prepare (which sends it first).
            c.begin("START TRANSACTION").await.unwrap();
            let sel = c.prepare("SELECT id FROM k WHERE id = ?").await.unwrap();
            assert_eq!(c.exec_rows(sel, &[Value::Int(5)]).await.unwrap(), 1);
            c.execute("COMMIT").await.unwrap();
            let b1 = begins(
                c.query("SHOW SESSION STATUS LIKE 'Com_begin'")
                    .await
                    .unwrap(),
            );
            assert_eq!(b1 - b0, 4, "{mode}: one BEGIN per transaction");
        }
    });
}

/// MariaDB's metadata cache (MARIADB_CLIENT_CACHE_METADATA) and parameter types sent once:
/// executions after the first come without column definitions and without types, and still
/// decode right; when the result's columns change (ALTER TABLE) the server describes them
/// again and the client uses the new ones; a failed execution (types then resent) does not
/// disturb the next one; text queries are unaffected.
#[test]
fn wire_cached_metadata_and_types() {
    let Some(url) = server_url("EB_TEST_MYSQL_URL") else {
        return;
    };
    let _g = server_lock();
    let url = fresh_db(&url, "eb_wire_meta");
    block(async {
        let mut c = wire(&url).await;
        assert!(
            c.caches_metadata(),
            "MariaDB 10.6+ offers the metadata cache and the client asks for it"
        );
        c.execute(
            "CREATE TABLE m (id INT PRIMARY KEY, v VARCHAR(20), n BIGINT);
             INSERT INTO m VALUES (1, 'one', -1), (2, 'two', NULL), (3, 'three', 3)",
        )
        .await
        .unwrap();
        let sel = c
            .prepare("SELECT * FROM m WHERE id >= ? ORDER BY id")
            .await
            .unwrap();
        let row = |id: &str, v: &str, n: Option<&str>| {
            vec![
                Some(id.to_string()),
                Some(v.to_string()),
                n.map(str::to_string),
            ]
        };
        for _ in 0..3 {
            let r = c.exec_fetch(sel, &[Value::Int(2)]).await.unwrap();
            assert_eq!(r, vec![row("2", "two", None), row("3", "three", Some("3"))]);
        }
        // Another parameter type for the same statement: types are sent again.
        let r = c.exec_fetch(sel, &[Value::Text("3".into())]).await.unwrap();
        assert_eq!(r, vec![row("3", "three", Some("3"))]);
        // The columns change: the server sends the new definitions.
        c.execute("ALTER TABLE m ADD COLUMN d DATE DEFAULT '2001-02-03'")
            .await
            .unwrap();
        for _ in 0..2 {
            let r = c.exec_fetch(sel, &[Value::Text("3".into())]).await.unwrap();
            assert_eq!(
                r,
                vec![vec![
                    Some("3".into()),
                    Some("three".into()),
                    Some("3".into()),
                    Some("2001-02-03".into())
                ]]
            );
        }
        // A failing execution, then the same statement again.
        let ins = c
            .prepare("INSERT INTO m (id, v) VALUES (?, ?)")
            .await
            .unwrap();
        c.exec_rows(ins, &[Value::Int(9), Value::Text("nine".into())])
            .await
            .unwrap();
        let e = c
            .exec_rows(ins, &[Value::Int(9), Value::Text("again".into())])
            .await
            .unwrap_err();
        assert_eq!(e.class, ErrorClass::DuplicateKey, "{}", e.message);
        c.exec_rows(ins, &[Value::Int(10), Value::Text("ten".into())])
            .await
            .unwrap();
        c.exec_rows(ins, &[Value::Int(11), Value::Null])
            .await
            .unwrap();
        let q = c
            .query("SELECT id, v FROM m WHERE id >= 9 ORDER BY id")
            .await
            .unwrap();
        assert_eq!(
            q,
            vec![
                vec![Some("9".into()), Some("nine".into())],
                vec![Some("10".into()), Some("ten".into())],
                vec![Some("11".into()), None]
            ]
        );
        assert_eq!(c.exec_rows(sel, &[Value::Int(1)]).await.unwrap(), 6);
    });
}
