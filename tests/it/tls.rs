//! TLS to MariaDB and PostgreSQL (`?ssl-mode=...&ssl-ca=...`): each test makes a throwaway CA
//! and a server certificate (for DNS name `localhost` only) with the openssl CLI, starts its own
//! private server with them through `enginebench server start`, and checks from the server's
//! side that the session is encrypted, that verify-ca accepts the right CA and refuses another
//! one with a one-line error, and that a run goes through end to end.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// The server binaries and openssl are needed; a missing one skips (or fails under
/// EB_REQUIRE_SERVERS=1, as scripts/test.sh sets).
fn have(kind: &str) -> bool {
    let server = match kind {
        "mariadb" => ["/usr/sbin/mariadbd", "/usr/bin/mariadbd"]
            .iter()
            .any(|p| Path::new(p).exists()),
        _ => std::fs::read_dir("/usr/lib/postgresql")
            .map(|d| d.flatten().any(|e| e.path().join("bin/postgres").exists()))
            .unwrap_or(false),
    };
    let openssl = Command::new("openssl").arg("version").output().is_ok();
    let ok = server && openssl;
    if !ok {
        if std::env::var("EB_REQUIRE_SERVERS").as_deref() == Ok("1") {
            panic!("{kind} server binaries or openssl missing but EB_REQUIRE_SERVERS=1");
        }
        eprintln!("skipped: {kind} server binaries or openssl not installed");
    }
    ok
}

pub struct Certs {
    pub ca: PathBuf,
    pub wrong_ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// A CA, a server certificate signed by it (valid for DNS name `localhost`, not for
/// 127.0.0.1), and an unrelated second CA. EC P-256 keys: quick to make.
pub fn make_certs(dir: &Path) -> Certs {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=DNS:localhost\nbasicConstraints=critical,CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let script = r#"set -e
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 -subj /CN=eb-test-ca
openssl req -x509 $ec -keyout wrong.key -out wrong.pem -days 2 -subj /CN=eb-other-ca
openssl req $ec -keyout server.key -out server.csr -subj /CN=localhost
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile ext.cnf
chmod 600 server.key
"#;
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in ["ca.pem", "wrong.pem", "server.pem"] {
        std::fs::set_permissions(dir.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    Certs {
        ca: dir.join("ca.pem"),
        wrong_ca: dir.join("wrong.pem"),
        cert: dir.join("server.pem"),
        key: dir.join("server.key"),
    }
}

/// A server started with `enginebench server start`, stopped when dropped.
pub struct Started {
    kind: &'static str,
    pub datadir: PathBuf,
    pub port: u16,
}

impl Started {
    pub fn start(kind: &'static str, datadir: PathBuf, opts: &[String]) -> Started {
        let dd = datadir.display().to_string();
        let mut args = vec![
            "server",
            "start",
            kind,
            "--profile",
            "small",
            "--datadir",
            &dd,
        ];
        for o in opts {
            args.push("--server-opt");
            args.push(o);
        }
        let out = eb(Path::new("/tmp"), &args);
        assert_eq!(out.code, 0, "server start: {}", out.stderr);
        let st: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(datadir.join("server.json")).unwrap())
                .unwrap();
        Started {
            kind,
            port: st["port"].as_u64().unwrap() as u16,
            datadir,
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let dd = self.datadir.display().to_string();
        let _ = eb(
            Path::new("/tmp"),
            &["server", "stop", self.kind, "--datadir", &dd],
        );
    }
}

fn one_value(url: &str, sql: &str) -> Result<Option<String>, String> {
    block(async {
        let spec = enginebench::db::TargetSpec::parse(url, |_| None)?;
        let mut c = enginebench::db::Conn::connect(&spec)
            .await
            .map_err(|e| e.message)?;
        let rows = c.query(sql).await.map_err(|e| e.message)?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().last().flatten()))
    })
}

/// A short point-select run through the binary; returns (exit code, stderr).
fn run_point_select(dir: &Path, url: &str) -> (i32, String) {
    let out = eb(
        dir,
        &[
            "run",
            "oltp_point_select",
            "--target",
            url,
            "--table-size",
            "200",
            "--threads",
            "2",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--duration",
            "300ms",
        ],
    );
    (out.code, out.stderr)
}

fn assert_one_line_refusal(code: i32, stderr: &str, what: &str) {
    assert_ne!(code, 0, "{what} was accepted");
    assert!(code == 2 || code == 1, "{what}: exit {code}: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{what}: {stderr}");
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
}

#[test]
fn mariadb_tls_modes() {
    if server_url("EB_TEST_MYSQL_URL").is_none() || !have("mariadb") {
        return;
    }
    let dir = tempdir();
    let certs = make_certs(dir.path());
    let opt = |k: &str, p: &Path| format!("{k}={}", p.display());
    let srv = Started::start(
        "mariadb",
        dir.path().join("srv"),
        &[
            opt("ssl_cert", &certs.cert),
            opt("ssl_key", &certs.key),
            opt("ssl_ca", &certs.ca),
        ],
    );
    let base = format!("mysql://root@localhost:{}/enginebench", srv.port);
    let cipher = "SHOW SESSION STATUS LIKE 'Ssl_cipher'";
    // Plain first: the check below must be able to tell the difference.
    assert_eq!(one_value(&base, cipher).unwrap().unwrap_or_default(), "");
    let ca = certs.ca.display().to_string();
    for mode in ["prefer", "require", "verify-ca", "verify-full"] {
        let url = if mode.starts_with("verify") {
            format!("{base}?ssl-mode={mode}&ssl-ca={ca}")
        } else {
            format!("{base}?ssl-mode={mode}")
        };
        let c = one_value(&url, cipher).unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert!(!c.unwrap_or_default().is_empty(), "{mode}: no TLS cipher");
    }
    // The whole run path over TLS, verified.
    let url = format!("{base}?ssl-mode=verify-ca&ssl-ca={ca}");
    let (code, err) = run_point_select(dir.path(), &url);
    assert_eq!(code, 0, "{err}");
    // Another CA: refused, one line, naming the certificate problem.
    let wrong = format!(
        "{base}?ssl-mode=verify-ca&ssl-ca={}",
        certs.wrong_ca.display()
    );
    let (code, err) = run_point_select(dir.path(), &wrong);
    assert_one_line_refusal(code, &err, "a certificate of another CA");
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    drop(srv);
}

#[test]
fn mariadb_without_tls_require_fails_prefer_falls_back() {
    let Some(tcp) = server_url("EB_TEST_MYSQL_TCP_URL") else {
        return;
    };
    // The shared test server has no certificate: TLS is not offered.
    let _g = server_lock();
    let dir = tempdir();
    let (code, err) = run_point_select(dir.path(), &format!("{tcp}?ssl-mode=require"));
    assert_one_line_refusal(code, &err, "require without TLS on the server");
    let v = one_value(
        &format!("{tcp}?ssl-mode=prefer"),
        "SHOW SESSION STATUS LIKE 'Ssl_cipher'",
    )
    .unwrap();
    assert_eq!(v.unwrap_or_default(), "");
}

#[test]
fn postgres_tls_modes() {
    if server_url("EB_TEST_PG_URL").is_none() || !have("postgres") {
        return;
    }
    let dir = tempdir();
    let certs = make_certs(dir.path());
    // PostgreSQL runs as user postgres and insists that it owns its key, mode 0600.
    let out = Command::new("chown")
        .arg("postgres")
        .arg(&certs.key)
        .output()
        .unwrap();
    assert!(out.status.success());
    let opt = |k: &str, p: &Path| format!("{k}={}", p.display());
    let srv = Started::start(
        "postgres",
        dir.path().join("srv"),
        &[
            "ssl=on".to_string(),
            opt("ssl_cert_file", &certs.cert),
            opt("ssl_key_file", &certs.key),
        ],
    );
    let ssl = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()";
    let ip = format!("postgres://postgres@127.0.0.1:{}/enginebench", srv.port);
    let name = format!("postgres://postgres@localhost:{}/enginebench", srv.port);
    assert_eq!(one_value(&ip, ssl).unwrap().as_deref(), Some("f"));
    let ca = certs.ca.display().to_string();
    for url in [
        format!("{ip}?ssl-mode=prefer"),
        format!("{ip}?ssl-mode=require"),
        // verify-ca checks the chain, not the name: 127.0.0.1 is not in the certificate.
        format!("{ip}?ssl-mode=verify-ca&ssl-ca={ca}"),
        format!("{name}?ssl-mode=verify-full&ssl-ca={ca}"),
    ] {
        let v = one_value(&url, ssl).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(v.as_deref(), Some("t"), "{url}");
    }
    // verify-full checks the name too.
    let e = one_value(&format!("{ip}?ssl-mode=verify-full&ssl-ca={ca}"), ssl).unwrap_err();
    assert!(e.contains("not valid for name"), "{e}");
    let url = format!("{ip}?ssl-mode=verify-ca&ssl-ca={ca}");
    let (code, err) = run_point_select(dir.path(), &url);
    assert_eq!(code, 0, "{err}");
    let wrong = format!(
        "{ip}?ssl-mode=verify-ca&ssl-ca={}",
        certs.wrong_ca.display()
    );
    let (code, err) = run_point_select(dir.path(), &wrong);
    assert_one_line_refusal(code, &err, "a certificate of another CA");
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    drop(srv);
}

#[test]
fn tls_url_mistakes_are_usage_errors() {
    let dir = tempdir();
    for url in [
        "mysql://root@127.0.0.1:1/db?ssl-mode=verify-ca",
        "postgres://u@127.0.0.1:1/db?ssl-mode=sometimes",
        "mysql://root@localhost/db?socket=/tmp/x.sock&ssl-mode=require",
        "postgres://u@127.0.0.1:1/db?ssl-ca=/tmp/ca.pem",
    ] {
        let out = eb(dir.path(), &["run", "oltp_point_select", "--target", url]);
        assert_eq!(out.code, 2, "{url}: {}", out.stderr);
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    }
    // A CA file that does not exist: named in a one-line error, exit 2.
    let out = eb(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            "postgres://u@127.0.0.1:1/db?ssl-mode=verify-ca&ssl-ca=/nonexistent/ca.pem",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("/nonexistent/ca.pem"), "{}", out.stderr);
}
