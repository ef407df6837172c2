//! The lean PostgreSQL client (src/db/pgwire) against the real PostgreSQL: the values and
//! row counts it returns equal what tokio-postgres returns for the same statements (NULLs,
//! dates, negative integers, numerics, multi-byte strings), errors are classified by SQLSTATE
//! and leave the connection usable (also inside a transaction), replies larger than the read
//! buffer are read whole, COPY loads, `?driver=tokio_postgres` is honoured, and trust, md5,
//! cleartext and SCRAM-SHA-256 authentication work. Also over TCP.

use crate::common::*;
use enginebench::db::pgwire::PgWireConn;
use enginebench::db::postgres::PgConn;
use enginebench::db::{Conn, ErrorClass, TargetSpec, Value};

fn with_driver(url: &str, driver: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}driver={driver}")
}

async fn wire(url: &str) -> PgWireConn {
    match PgWireConn::connect(&spec(url)).await {
        Ok(c) => c,
        Err(_) => panic!("the lean client must connect to the test server"),
    }
}

const SETUP: &str = "DROP TABLE IF EXISTS t;
CREATE TABLE t (
  id INT PRIMARY KEY, i INT, b BIGINT, s VARCHAR(50), d DATE, ts TIMESTAMP(6), n NUMERIC(10,3),
  sm SMALLINT, c CHAR(5), f DOUBLE PRECISION, ok BOOLEAN
);
INSERT INTO t VALUES
  (1, -5, 9223372036854775807, 'héllo wörld', '2001-02-03', '2001-02-03 04:05:06.789', -12.5, -32768, 'ab', 1.5, true),
  (2, NULL, -9223372036854775808, '日本語 ✓ 🚀', '1970-01-01', '1999-12-31 23:59:59.000001', 0.001, 32767, '', -0.25, false),
  (3, 2147483647, 42, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (4, -2147483648, 7, '', '9999-12-31', '2020-01-01 00:00:00', 9999999.999, 0, 'xyzzy', 1e300, true)";

const COLS: &str = "id, i, b, s, d, ts, n, sm, c, f, ok";

fn check_same_as_tokio_postgres(url: &str) {
    block(async {
        let mut w = wire(url).await;
        w.execute(SETUP).await.unwrap();
        let mut a = match Conn::connect(&spec(&with_driver(url, "tokio_postgres"))).await {
            Ok(Conn::Postgres(c @ PgConn::Tokio(_))) => c,
            _ => panic!("driver=tokio_postgres gives a tokio-postgres connection"),
        };
        let all = format!("SELECT {COLS} FROM t ORDER BY id");
        let expected = a.query(&all).await.unwrap();
        assert_eq!(expected.len(), 4);
        // Simple protocol through the lean client.
        assert_eq!(w.query(&all).await.unwrap(), expected);
        // Extended protocol: prepared, no parameters.
        let st = w.prepare(&all).await.unwrap();
        assert_eq!(w.exec_fetch(st, &[]).await.unwrap(), expected);
        assert_eq!(w.exec_rows(st, &[]).await.unwrap(), 4);
        // Parameters of every kind the workloads bind, against the same through tokio-postgres.
        let sql = format!(
            "SELECT {COLS} FROM t WHERE id >= ? AND (s = ? OR d = ? OR i IS NOT DISTINCT FROM ?) ORDER BY id"
        );
        let by = w.prepare(&sql).await.unwrap();
        let aby = a.prepare(&sql).await.unwrap();
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
                    Value::Int(-2147483648),
                ],
                vec![0, 3],
            ),
            (
                vec![
                    Value::Int(-1),
                    Value::Text("it's".into()),
                    Value::Null,
                    Value::Int(5),
                ],
                vec![],
            ),
        ];
        for (params, want) in cases {
            let got = w.exec_fetch(by, &params).await.unwrap();
            let want_rows: Vec<_> = want.iter().map(|&i| expected[i].clone()).collect();
            assert_eq!(got, want_rows, "{params:?}");
            let n = a.exec_rows(aby, &params).await.unwrap();
            assert_eq!(n, want.len() as u64, "tokio-postgres agrees on {params:?}");
            assert_eq!(w.exec_rows(by, &params).await.unwrap(), n);
        }
        // Integers, NULL included, and the same through the Conn API of both clients.
        let ints = "SELECT id, i, b, sm FROM t WHERE id <= ? ORDER BY id";
        let wi = w.prepare(ints).await.unwrap();
        let ai = a.prepare(ints).await.unwrap();
        let (mut wo, mut ao) = (Vec::new(), Vec::new());
        assert_eq!(w.exec_ints(wi, &[Value::Int(3)], &mut wo).await.unwrap(), 3);
        assert_eq!(a.exec_ints(ai, &[Value::Int(3)], &mut ao).await.unwrap(), 3);
        assert_eq!(wo, ao);
        assert_eq!(wo[4..8], [Some(2), None, Some(i64::MIN), Some(32767)]);
        // A text column is not an integer: an error, and the connection still works.
        let bad = w.prepare("SELECT s FROM t WHERE id = 1").await.unwrap();
        let e = w.exec_ints(bad, &[], &mut wo).await.unwrap_err();
        assert_eq!(e.class, ErrorClass::Other);
        assert_eq!(w.exec_rows(st, &[]).await.unwrap(), 4);
        // Wrong parameter count is refused before anything is sent.
        let e = w.exec_rows(by, &[Value::Int(1)]).await.unwrap_err();
        assert!(e.message.contains("4 parameters, 1 given"), "{}", e.message);
        assert_eq!(w.exec_rows(st, &[]).await.unwrap(), 4);
    });
}

#[test]
fn same_results_as_tokio_postgres_over_the_socket() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let url = fresh_db(&base, "eb_pgwire");
    check_same_as_tokio_postgres(&url);
}

#[test]
fn same_results_as_tokio_postgres_over_tcp() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let Ok(tcp) = std::env::var("EB_TEST_PG_TCP_URL") else {
        eprintln!("skipped: EB_TEST_PG_TCP_URL not set");
        return;
    };
    fresh_db(&base, "eb_pgwire_tcp");
    let mut u = url::Url::parse(&tcp).unwrap();
    u.set_path("/eb_pgwire_tcp");
    check_same_as_tokio_postgres(u.as_str());
}

#[test]
fn errors_are_classified_and_the_connection_stays_usable() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let url = fresh_db(&base, "eb_pgwire_err");
    block(async {
        let mut w = wire(&url).await;
        w.execute("CREATE TABLE k (id INT PRIMARY KEY, v TEXT)")
            .await
            .unwrap();
        let ins = w.prepare("INSERT INTO k VALUES (?, ?)").await.unwrap();
        w.exec_rows(ins, &[Value::Int(1), Value::Text("a".into())])
            .await
            .unwrap();
        // Duplicate key in the extended protocol.
        let e = w
            .exec_rows(ins, &[Value::Int(1), Value::Text("b".into())])
            .await
            .unwrap_err();
        assert_eq!(e.class, ErrorClass::DuplicateKey, "{}", e.message);
        assert!(
            e.message.starts_with("ERROR: duplicate key"),
            "{}",
            e.message
        );
        // A bad statement at prepare: an error of class other, connection still fine.
        let e = w.prepare("SELEC 1").await.unwrap_err();
        assert_eq!(e.class, ErrorClass::Other);
        assert!(e.message.contains("syntax error"), "{}", e.message);
        // Inside a transaction: the error aborts it, ROLLBACK ends it, the next one works.
        w.execute("BEGIN").await.unwrap();
        let e = w
            .exec_rows(ins, &[Value::Int(1), Value::Null])
            .await
            .unwrap_err();
        assert_eq!(e.class, ErrorClass::DuplicateKey);
        let e = w.execute("SELECT 1").await.unwrap_err();
        assert!(e.message.contains("aborted"), "{}", e.message);
        w.execute("ROLLBACK").await.unwrap();
        // A server-side statement timeout is a query timeout that keeps the connection.
        w.execute("SET statement_timeout = '50ms'").await.unwrap();
        let e = w.execute("SELECT pg_sleep(2)").await.unwrap_err();
        assert_eq!(e.class, ErrorClass::QueryTimeout, "{}", e.message);
        w.execute("SET statement_timeout = 0").await.unwrap();
        // Several statements in one text command; the error of a later one is reported.
        let e = w
            .execute("INSERT INTO k VALUES (2, 'x'); INSERT INTO k VALUES (2, 'y')")
            .await
            .unwrap_err();
        assert_eq!(e.class, ErrorClass::DuplicateKey);
        w.execute("INSERT INTO k VALUES (3, 'x'); INSERT INTO k VALUES (4, 'y')")
            .await
            .unwrap();
        assert_eq!(
            w.query("SELECT count(*) FROM k").await.unwrap(),
            vec![vec![Some("3".to_string())]]
        );
        // Empty query and notices are harmless.
        w.execute("").await.unwrap();
        w.execute("DROP TABLE IF EXISTS no_such_table")
            .await
            .unwrap();
        // A session the server ends is a lost connection.
        let pid = w.query("SELECT pg_backend_pid()").await.unwrap()[0][0]
            .clone()
            .unwrap();
        let mut other = wire(&url).await;
        other
            .execute(&format!("SELECT pg_terminate_backend({pid})"))
            .await
            .unwrap();
        let e = w.exec_rows(ins, &[Value::Int(9), Value::Null]).await;
        assert_eq!(e.unwrap_err().class, ErrorClass::ConnectionLost);
    });
}

#[test]
fn large_replies_copy_and_driver_choice() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let url = fresh_db(&base, "eb_pgwire_big");
    block(async {
        let mut c = Conn::connect(&spec(&url)).await.unwrap();
        assert!(matches!(&c, Conn::Postgres(PgConn::Wire(_))));
        c.execute("CREATE TABLE big (id INT PRIMARY KEY, s TEXT)")
            .await
            .unwrap();
        // COPY through the lean client: 20,000 rows with characters COPY must escape.
        let rows: Vec<Vec<Value>> = (1..=20_000)
            .map(|i| vec![Value::Int(i), Value::Text(format!("r{i}\ttab\\back\nline"))])
            .collect();
        c.load_rows("big", &["id", "s"], &rows).await.unwrap();
        assert_eq!(
            c.query_one("SELECT count(*) FROM big").await.unwrap(),
            Some("20000".into())
        );
        assert_eq!(
            c.query_one("SELECT s FROM big WHERE id = 7").await.unwrap(),
            Some("r7\ttab\\back\nline".into())
        );
        // A reply many times the 64 KiB read buffer, and one value larger than it.
        let all = c
            .prepare("SELECT id, s FROM big WHERE id > ?")
            .await
            .unwrap();
        assert_eq!(c.exec_rows(all, &[Value::Int(0)]).await.unwrap(), 20_000);
        let wide = c.query("SELECT repeat('x', 300000)").await.unwrap();
        assert_eq!(wide[0][0].as_ref().map(String::len), Some(300_000));
        // A bad COPY is an error, and the connection goes on.
        let e = c
            .load_rows("big", &["id", "s"], &[vec![Value::Int(1), Value::Null]])
            .await
            .unwrap_err();
        assert_eq!(e.class, ErrorClass::DuplicateKey, "{}", e.message);
        assert_eq!(c.exec_rows(all, &[Value::Int(19_990)]).await.unwrap(), 10);
        // The escape hatch.
        let t = Conn::connect(&spec(&with_driver(&url, "tokio_postgres")))
            .await
            .unwrap();
        assert!(matches!(&t, Conn::Postgres(PgConn::Tokio(_))));
    });
}

/// md5, cleartext and SCRAM-SHA-256 on a private server whose pg_hba asks for them over TCP.
#[test]
fn password_authentication_methods() {
    if server_url("EB_TEST_PG_URL").is_none() {
        return;
    }
    let have_pg = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().any(|e| e.path().join("bin/postgres").exists()))
        .unwrap_or(false);
    if !have_pg {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let hba = dir.path().join("hba.conf");
    std::fs::write(
        &hba,
        "local all all trust\nhost all eb_md5 127.0.0.1/32 md5\nhost all eb_clear 127.0.0.1/32 password\nhost all all 127.0.0.1/32 scram-sha-256\n",
    )
    .unwrap();
    std::fs::set_permissions(&hba, std::fs::Permissions::from_mode(0o644)).unwrap();
    let srv = crate::tls::Started::start(
        "postgres",
        dir.path().join("srv"),
        &[format!("hba_file={}", hba.display())],
    );
    let sock = serde_json::from_str::<serde_json::Value>(
        &std::fs::read_to_string(srv.datadir.join("server.json")).unwrap(),
    )
    .unwrap()["url"]
        .as_str()
        .unwrap()
        .to_string();
    block(async {
        let mut c = wire(&sock).await;
        c.execute(
            "SET password_encryption = 'md5'; CREATE USER eb_md5 PASSWORD 'pw-md5';
             SET password_encryption = 'scram-sha-256'; CREATE USER eb_scram PASSWORD 'pw-scram';
             CREATE USER eb_clear PASSWORD 'pw-clear'",
        )
        .await
        .unwrap();
        for (user, pw) in [
            ("eb_md5", "pw-md5"),
            ("eb_scram", "pw-scram"),
            ("eb_clear", "pw-clear"),
        ] {
            let url = format!("postgres://{user}@127.0.0.1:{}/enginebench", srv.port);
            let good = TargetSpec::parse(&url, |_| Some(pw.to_string())).unwrap();
            let mut w = match PgWireConn::connect(&good).await {
                Ok(w) => w,
                Err(_) => panic!("{user}: the lean client logs in"),
            };
            assert_eq!(
                w.query("SELECT current_user").await.unwrap(),
                vec![vec![Some(user.to_string())]]
            );
            let bad = TargetSpec::parse(&url, |_| Some(format!("{pw}-wrong"))).unwrap();
            match Conn::connect(&bad).await {
                Err(e) => {
                    assert_eq!(e.class, ErrorClass::AccessDenied, "{user}: {}", e.message);
                    assert!(!e.message.contains(pw), "{}", e.message);
                }
                Ok(_) => panic!("{user}: a wrong password is refused"),
            }
            let none = TargetSpec::parse(&url, |_| None).unwrap();
            let e = Conn::connect(&none).await.err().expect("no password");
            assert_eq!(e.class, ErrorClass::AccessDenied, "{user}: {}", e.message);
        }
    });
    drop(srv);
}

/// A deferred BEGIN (`Conn::begin`) is written with the next statement: the statements still
/// run inside the transaction (a ROLLBACK undoes them), an error of the first statement comes
/// back from that statement and leaves the connection usable, and `?begin=separate` sends it
/// alone.
#[test]
fn deferred_begin() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let url = fresh_db(&base, "eb_pgwire_begin");
    block(async {
        for (mode, deferred) in [("pipelined", true), ("separate", false)] {
            let mut c = Conn::connect(&spec(&format!("{url}&begin={mode}")))
                .await
                .unwrap();
            match &c {
                Conn::Postgres(PgConn::Wire(w)) => assert_eq!(w.pipeline_begin, deferred),
                _ => panic!("the lean client"),
            }
            c.execute("DROP TABLE IF EXISTS k; CREATE TABLE k (id INT PRIMARY KEY)")
                .await
                .unwrap();
            let ins = c.prepare("INSERT INTO k VALUES (?)").await.unwrap();
            c.begin("BEGIN").await.unwrap();
            assert_eq!(c.exec_rows(ins, &[Value::Int(1)]).await.unwrap(), 0);
            let in_tx = c
                .query_one("SELECT now() = statement_timestamp()")
                .await
                .unwrap();
            assert_eq!(in_tx.as_deref(), Some("f"), "{mode}: inside a transaction");
            c.execute("ROLLBACK").await.unwrap();
            let n = c.query_one("SELECT count(*) FROM k").await.unwrap();
            assert_eq!(
                n.as_deref(),
                Some("0"),
                "{mode}: the insert was rolled back"
            );
            c.execute("INSERT INTO k VALUES (5)").await.unwrap();
            c.begin("BEGIN").await.unwrap();
            let e = c.exec_rows(ins, &[Value::Int(5)]).await.unwrap_err();
            assert_eq!(e.class, ErrorClass::DuplicateKey, "{}", e.message);
            c.execute("ROLLBACK").await.unwrap();
            c.begin("BEGIN").await.unwrap();
            c.execute("COMMIT").await.unwrap();
            c.begin("BEGIN").await.unwrap();
            let sel = c.prepare("SELECT id FROM k WHERE id = ?").await.unwrap();
            assert_eq!(c.exec_rows(sel, &[Value::Int(5)]).await.unwrap(), 1);
            c.execute("COMMIT").await.unwrap();
            let n = c.query_one("SELECT count(*) FROM k").await.unwrap();
            assert_eq!(n.as_deref(), Some("1"));
        }
    });
}

/// `Conn::exec_pipelined` queues statements without reading their replies (it returns 0 for a
/// SELECT that finds a row; the row is counted once COMMIT has read the replies), the
/// statements still run in order inside the transaction, a failure among them comes back
/// from COMMIT with its own class and rolls everything back, and the connection stays in
/// step afterwards, also with BEGIN and COMMIT in the pipeline. `?pipeline=off` runs each at
/// once.
#[test]
fn pipelined_statements() {
    let Some(base) = server_url("EB_TEST_PG_URL") else {
        return;
    };
    let url = fresh_db(&base, "eb_pgwire_pipeline");
    block(async {
        for (mode, on) in [("on", true), ("off", false)] {
            let mut c = Conn::connect(&spec(&format!("{url}&pipeline={mode}")))
                .await
                .unwrap();
            c.execute("DROP TABLE IF EXISTS p; CREATE TABLE p (id INT PRIMARY KEY)")
                .await
                .unwrap();
            let ins = c.prepare("INSERT INTO p VALUES (?)").await.unwrap();
            let sel = c.prepare("SELECT id FROM p WHERE id = ?").await.unwrap();
            c.begin("BEGIN").await.unwrap();
            c.exec_pipelined(ins, &[Value::Int(1)]).await.unwrap();
            let seen = c.exec_pipelined(sel, &[Value::Int(1)]).await.unwrap();
            c.exec_pipelined(ins, &[Value::Int(2)]).await.unwrap();
            c.execute("COMMIT").await.unwrap();
            // Deferred: 0 at once and 1 after COMMIT; at once: 1 and nothing owed.
            assert_eq!(seen, if on { 0 } else { 1 }, "{mode}");
            assert_eq!(c.take_pipelined_rows(), if on { 1 } else { 0 }, "{mode}");
            let n = c.query_one("SELECT count(*) FROM p").await.unwrap();
            assert_eq!(n.as_deref(), Some("2"), "{mode}");

            // BEGIN and COMMIT in the pipeline too (one Sync for all): the same rows.
            c.begin_pipelined("BEGIN").await.unwrap();
            c.exec_pipelined(ins, &[Value::Int(10)]).await.unwrap();
            c.exec_pipelined(sel, &[Value::Int(10)]).await.unwrap();
            c.commit_pipelined().await.unwrap();
            assert_eq!(c.take_pipelined_rows(), if on { 1 } else { 0 }, "{mode}");
            c.execute("DELETE FROM p WHERE id = 10").await.unwrap();

            // A duplicate in the middle: the rest (COMMIT included) is skipped or refused,
            // and COMMIT reports the failure.
            c.begin_pipelined("BEGIN").await.unwrap();
            let mut r = c.exec_pipelined(ins, &[Value::Int(3)]).await;
            if r.is_ok() {
                r = c.exec_pipelined(ins, &[Value::Int(1)]).await;
            }
            if r.is_ok() {
                r = c.exec_pipelined(ins, &[Value::Int(4)]).await;
            }
            if r.is_ok() {
                r = c.commit_pipelined().await.map(|_| 0);
            }
            let e = r.unwrap_err();
            assert_eq!(e.class, ErrorClass::DuplicateKey, "{mode}: {}", e.message);
            c.execute("ROLLBACK").await.unwrap();
            c.take_pipelined_rows();
            let n = c.query_one("SELECT count(*) FROM p").await.unwrap();
            assert_eq!(n.as_deref(), Some("2"), "{mode}: nothing of it stayed");
        }
    });
}
