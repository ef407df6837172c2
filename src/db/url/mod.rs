//! Target URLs: `sqlite:///path.db`, `mysql://user:pass@host:port/db?socket=/x.sock`,
//! `postgres://user:pass@host:port/db?host=/socket/dir`, both with optional
//! `ssl-mode=disable|prefer|require|verify-ca|verify-full` and `ssl-ca=FILE`. Validation only,
//! no I/O.
//!
//! Several hosts in one target (`mysql://u@h1:3306,h2:3306/db`, libpq's multi-host form for
//! PostgreSQL): the nodes of a cluster. Connection `w` goes to node `w % nodes`, the way
//! sysbench spreads its threads over a `--mysql-host` list.

mod query;

use query::QueryOptions;

use std::path::PathBuf;

use super::text::StatementMode;
use super::tls::SslMode;
use super::Dbms;

/// A parsed, validated target. The password is kept out of `Debug` and `display`.
#[derive(Clone)]
pub struct TargetSpec {
    pub dbms: Dbms,
    /// The URL with any password replaced by `***`: the only form that is ever shown or stored.
    pub display: String,
    pub sqlite_path: PathBuf,
    pub host: String,
    pub port: u16,
    /// Unix socket (MySQL) or socket directory (PostgreSQL).
    pub socket: Option<String>,
    pub user: String,
    pub password: Option<String>,
    pub database: String,
    /// True when the password came from the URL (the caller warns about it).
    pub password_in_url: bool,
    /// MySQL only, `?driver=`: which client library speaks to the server.
    pub mysql_driver: MysqlDriver,
    /// `?ssl-mode=`: TLS to the server (TCP only); disable by default.
    pub ssl_mode: SslMode,
    /// `?ssl-ca=`: the CA certificate(s) (PEM) that verify-ca/verify-full check against.
    pub ssl_ca: Option<PathBuf>,
    /// PostgreSQL only, `?driver=`: which client speaks to the server.
    pub pg_driver: PgDriver,
    /// `?begin=pipelined|separate` (MySQL and PostgreSQL lean clients): whether a
    /// transaction's BEGIN is written together with its first statement (the default: one
    /// round trip less per transaction) or sent alone and waited for, as sysbench and pgbench
    /// do.
    pub pipeline_begin: bool,
    /// `?pipeline=on|off` (PostgreSQL lean client): whether the statements of a workload-file
    /// transaction marked `pipeline = true` are written without waiting for the previous
    /// statement's reply (on, the default) or one at a time.
    pub pipeline_statements: bool,
    /// Every node of a multi-host URL as (host, port), in the URL's order; empty for one host.
    /// `host`/`port` above are the first node's (the admin connection's).
    pub nodes: Vec<(String, u16)>,
    /// MySQL only, `?spider=h1:p1,h2:p2` (or socket paths): the target is a Spider head (the
    /// URL's host) and these are its backends, in partition order, reached with the same
    /// user, password and database. Empty for any other target.
    pub spider: Vec<Endpoint>,
    /// `?read=replicas` (PostgreSQL, several hosts: the first is the primary): read-only
    /// operations go to the other hosts, everything else to the first.
    pub read: ReadRoute,
    /// `--statements` (not a URL option): how the connections send a workload's statements.
    pub statements: StatementMode,
}

/// Where a multi-host target's connections go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadRoute {
    /// Round robin over every host, whatever the operation does.
    #[default]
    Spread,
    /// Read-only operations to the replicas (hosts 2..), the rest to the primary (host 1).
    Replicas,
}

/// Where one server listens: TCP or a Unix socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Tcp(String, u16),
    Socket(String),
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Tcp(h, p) if h.contains(':') => write!(f, "[{h}]:{p}"),
            Endpoint::Tcp(h, p) => write!(f, "{h}:{p}"),
            Endpoint::Socket(s) => f.write_str(s),
        }
    }
}

/// The PostgreSQL client used for a target (`?driver=wire|tokio_postgres` in the URL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PgDriver {
    /// enginebench's lean protocol client (src/db/pgwire), falling back to tokio-postgres
    /// when the server needs something it does not speak (TLS, GSSAPI, SCRAM with channel
    /// binding only).
    #[default]
    Wire,
    /// Always the general `tokio-postgres` driver.
    TokioPostgres,
}

/// The MySQL client used for a target (`?driver=wire|mysql_async` in the URL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MysqlDriver {
    /// enginebench's lean protocol client (src/db/mysqlwire), falling back to mysql_async
    /// when the server needs something it does not speak (TLS, other authentication plugins).
    #[default]
    Wire,
    /// Always the general `mysql_async` driver.
    MysqlAsync,
}

impl std::fmt::Debug for TargetSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display)
    }
}

/// The default target: an embedded SQLite file under `./enginebench-data/`.
pub const DEFAULT_TARGET: &str = "sqlite://enginebench-data/enginebench.db";

impl TargetSpec {
    /// Parse a target URL. `env_password` is what `MYSQL_PWD` / `PGPASSWORD` hold, looked up by
    /// the caller so that this stays pure.
    pub fn parse(raw: &str, env_password: impl Fn(Dbms) -> Option<String>) -> Result<Self, String> {
        let scheme = raw.split("://").next().unwrap_or("");
        if !raw.contains("://") {
            return Err(format!(
                "invalid target '{}': expected a URL such as sqlite:///path/to.db, mysql://user@host:3306/db or postgres://user@host:5432/db",
                redact_raw(raw)
            ));
        }
        match scheme {
            "sqlite" => {
                let path = &raw["sqlite://".len()..];
                if path.is_empty() {
                    return Err(
                        "invalid target 'sqlite://': give a file path, e.g. sqlite:///tmp/bench.db"
                            .into(),
                    );
                }
                Ok(Self::sqlite(PathBuf::from(path), raw.to_string()))
            }
            "mysql" | "mariadb" => Self::network(raw, Dbms::Mysql, 3306, "socket", &env_password),
            "postgres" | "postgresql" => {
                Self::network(raw, Dbms::Postgres, 5432, "host", &env_password)
            }
            other => Err(format!(
                "invalid target '{}': unknown scheme '{other}' (use sqlite, mysql or postgres)",
                redact_raw(raw)
            )),
        }
    }

    fn sqlite(path: PathBuf, display: String) -> Self {
        Self {
            dbms: Dbms::Sqlite,
            display,
            sqlite_path: path,
            host: String::new(),
            port: 0,
            socket: None,
            user: String::new(),
            password: None,
            database: String::new(),
            password_in_url: false,
            mysql_driver: MysqlDriver::default(),
            ssl_mode: SslMode::Disable,
            ssl_ca: None,
            pg_driver: PgDriver::default(),
            pipeline_begin: false,
            pipeline_statements: false,
            nodes: Vec::new(),
            spider: Vec::new(),
            read: ReadRoute::Spread,
            statements: StatementMode::Prepared,
        }
    }

    fn network(
        raw: &str,
        dbms: Dbms,
        default_port: u16,
        socket_key: &str,
        env_password: &dyn Fn(Dbms) -> Option<String>,
    ) -> Result<Self, String> {
        let shown = redact_raw(raw);
        let (one, hostlist) = split_hosts(raw);
        let u = url::Url::parse(&one).map_err(|e| format!("invalid target '{shown}': {e}"))?;
        let nodes = match &hostlist {
            Some(list) => parse_hosts(list, default_port)
                .map_err(|e| format!("invalid target '{shown}': {e}"))?,
            None => Vec::new(),
        };

        let host = u
            .host_str()
            .unwrap_or("")
            .trim_matches(['[', ']'])
            .to_string();
        let QueryOptions {
            socket,
            mysql_driver,
            pg_driver,
            ssl_mode,
            ssl_ca,
            pipeline_begin,
            pipeline_statements,
            spider,
            read,
        } = QueryOptions::parse(&u, &shown, dbms, default_port, socket_key)?;
        if host.is_empty() && socket.is_none() {
            return Err(format!(
                "invalid target '{shown}': no host (e.g. {}://user@127.0.0.1/db)",
                u.scheme()
            ));
        }
        let user = percent_decode(u.username());
        if user.is_empty() {
            return Err(format!(
                "invalid target '{shown}': no user name (e.g. {}://root@127.0.0.1/db)",
                u.scheme()
            ));
        }
        let database = percent_decode(u.path().trim_start_matches('/'));
        if database.is_empty() || database.contains('/') {
            return Err(format!("invalid target '{shown}': give one database name as the path, e.g. .../enginebench"));
        }
        if ssl_mode.verifies() && ssl_ca.is_none() {
            return Err(format!(
                "invalid target '{shown}': ssl-mode={} needs ssl-ca=FILE (the CA certificate in PEM)",
                ssl_mode.name()
            ));
        }
        if ssl_ca.is_some() && !ssl_mode.verifies() {
            return Err(format!(
                "invalid target '{shown}': ssl-ca is used only with ssl-mode=verify-ca or verify-full"
            ));
        }
        // TLS is a TCP matter: the drivers would silently send a Unix socket's traffic in the
        // clear, so a mode that promises encryption refuses a socket.
        if socket.is_some()
            && matches!(
                ssl_mode,
                SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull
            )
        {
            return Err(format!(
                "invalid target '{shown}': ssl-mode={} needs a TCP connection (host:port), not a Unix socket",
                ssl_mode.name()
            ));
        }
        if read == ReadRoute::Replicas && nodes.len() < 2 {
            return Err(format!(
                "invalid target '{shown}': read=replicas needs a primary and at least one replica, e.g. postgres://user@primary:5432,replica:5433/db"
            ));
        }
        if !nodes.is_empty() && socket.is_some() {
            return Err(format!(
                "invalid target '{shown}': several hosts need TCP (host:port each), not ?{socket_key}= (a socket is one server)"
            ));
        }
        if !spider.is_empty() && !nodes.is_empty() {
            return Err(format!(
                "invalid target '{shown}': a Spider target names one head (the URL's host) and its backends in ?spider=, not several hosts"
            ));
        }
        let head = match &socket {
            Some(s) => Endpoint::Socket(s.clone()),
            None => Endpoint::Tcp(
                if host.is_empty() {
                    "localhost".into()
                } else {
                    host.clone()
                },
                u.port().unwrap_or(default_port),
            ),
        };
        for (i, b) in spider.iter().enumerate() {
            if *b == head {
                return Err(format!(
                    "invalid target '{shown}': spider backend {b} is the head itself (a Spider table cannot point at its own server)"
                ));
            }
            if spider[..i].contains(b) {
                return Err(format!(
                    "invalid target '{shown}': spider backend {b} is listed twice"
                ));
            }
        }
        let url_password = u.password().map(percent_decode);
        let password_in_url = url_password.is_some();
        let password = url_password.or_else(|| env_password(dbms));
        let display = display_of(&u, hostlist.as_deref(), password_in_url);
        let (host, port) = match nodes.first() {
            Some((h, p)) => (h.clone(), *p),
            None => (host, u.port().unwrap_or(default_port)),
        };
        Ok(Self {
            dbms,
            display,
            sqlite_path: PathBuf::new(),
            host: if host.is_empty() {
                "localhost".into()
            } else {
                host
            },
            port,
            socket,
            user,
            password,
            database,
            password_in_url,
            mysql_driver,
            ssl_mode,
            ssl_ca,
            pg_driver,
            pipeline_begin,
            pipeline_statements,
            nodes,
            spider,
            read,
            statements: StatementMode::Prepared,
        })
    }

    /// True for a Spider head with its backends (`?spider=`).
    pub fn is_spider(&self) -> bool {
        !self.spider.is_empty()
    }

    /// The Spider backend `k` as a one-server target: the same user, password, database and
    /// options, its own host:port or socket; `display` names it.
    pub fn spider_backend(&self, k: usize) -> TargetSpec {
        let mut t = self.clone();
        t.spider = Vec::new();
        t.nodes = Vec::new();
        let Some(b) = self.spider.get(k) else {
            return t;
        };
        match b {
            Endpoint::Tcp(h, p) => {
                t.host = h.clone();
                t.port = *p;
                t.socket = None;
            }
            Endpoint::Socket(s) => {
                t.host = "localhost".into();
                t.socket = Some(s.clone());
            }
        }
        if let Ok(mut u) = url::Url::parse(&self.display) {
            let pairs: Vec<(String, String)> = u
                .query_pairs()
                .filter(|(k, _)| k != "spider" && k != "socket")
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            let (host, port, socket) = match b {
                Endpoint::Tcp(h, p) => (h.as_str(), Some(*p), None),
                Endpoint::Socket(s) => ("localhost", None, Some(s.as_str())),
            };
            let host = if host.contains(':') {
                format!("[{host}]")
            } else {
                host.to_string()
            };
            if u.set_host(Some(&host)).is_ok() && u.set_port(port).is_ok() {
                u.set_query(None);
                {
                    let mut q = u.query_pairs_mut();
                    for (k, v) in &pairs {
                        q.append_pair(k, v);
                    }
                    if let Some(s) = socket {
                        q.append_pair("socket", s);
                    }
                }
                if u.query() == Some("") {
                    u.set_query(None);
                }
                t.display = u.to_string();
            }
        }
        t
    }

    /// How many nodes the target has (1 unless the URL lists several hosts).
    pub fn node_count(&self) -> usize {
        self.nodes.len().max(1)
    }

    /// `host:port` of node `i` (the socket for a one-host target on a Unix socket).
    pub fn node_label(&self, i: usize) -> String {
        match self.nodes.get(i) {
            Some((h, p)) => format!("{h}:{p}"),
            None => match &self.socket {
                Some(s) if self.nodes.is_empty() => s.clone(),
                _ => format!("{}:{}", self.host, self.port),
            },
        }
    }

    /// The target narrowed to node `i`: a one-host spec whose `display` names that node.
    pub fn node(&self, i: usize) -> TargetSpec {
        let Some((h, p)) = self.nodes.get(i) else {
            return self.clone();
        };
        let mut t = self.clone();
        if let (_, Some(list)) = split_hosts(&self.display) {
            t.display = self.display.replacen(&list, &format!("{h}:{p}"), 1);
        }
        t.host = h.clone();
        t.port = *p;
        t.nodes = Vec::new();
        t
    }

    /// Remove the password from any text (driver messages, for instance) before it is shown.
    pub fn scrub(&self, text: &str) -> String {
        match &self.password {
            Some(p) if !p.is_empty() => text.replace(p.as_str(), "***"),
            _ => text.to_string(),
        }
    }
}

/// Split a multi-host URL: the URL with only the first host (what `url::Url` parses) and the
/// host list as written, or the URL unchanged and None when it names one host.
fn split_hosts(raw: &str) -> (String, Option<String>) {
    let Some(start) = raw.find("://").map(|i| i + 3) else {
        return (raw.to_string(), None);
    };
    let end = raw[start..]
        .find(['/', '?'])
        .map_or(raw.len(), |i| start + i);
    let auth = &raw[start..end];
    let host_at = auth.rfind('@').map_or(start, |i| start + i + 1);
    let list = &raw[host_at..end];
    if !list.contains(',') {
        return (raw.to_string(), None);
    }
    let first = list.split(',').next().unwrap_or("");
    (
        format!("{}{first}{}", &raw[..host_at], &raw[end..]),
        Some(list.to_string()),
    )
}

/// `h1:p1,h2,[::1]:p3` as (host, port) pairs, the default port where none is given.
fn parse_hosts(list: &str, default_port: u16) -> Result<Vec<(String, u16)>, String> {
    let mut out = Vec::new();
    for item in list.split(',') {
        let (h, p) = match item.rsplit_once(':') {
            Some((h, p)) if !p.contains(']') => (h, Some(p)),
            _ => (item, None),
        };
        let h = h.trim_matches(['[', ']']);
        if h.is_empty() {
            return Err(format!("empty host in the host list '{list}'"));
        }
        let port = match p {
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("bad port '{p}' in the host list '{list}'"))?,
            None => default_port,
        };
        out.push((h.to_string(), port));
    }
    Ok(out)
}

/// `h1:p1,/run/x.sock,[::1]:p3`: TCP endpoints (the default port where none is given) and
/// Unix sockets (an absolute path).
fn parse_endpoints(list: &str, default_port: u16) -> Result<Vec<Endpoint>, String> {
    let mut out = Vec::new();
    for item in list.split(',') {
        if item.starts_with('/') {
            out.push(Endpoint::Socket(item.to_string()));
        } else {
            let (h, p) = parse_hosts(item, default_port)?
                .pop()
                .ok_or_else(|| format!("empty backend in '{list}'"))?;
            out.push(Endpoint::Tcp(h, p));
        }
    }
    Ok(out)
}

/// True for query keys whose values are secrets (`password=`, `sslkey=`, `ssl-key=`, ...).
fn is_secret_key(k: &str) -> bool {
    let k = k.to_ascii_lowercase();
    k.contains("pass") || k.contains("pwd") || k.contains("key") || k.contains("secret")
}

/// Best-effort redaction of a URL that may not parse: drop what sits between the first `:` of
/// the user part and the last `@` (more than the password when the rest holds an `@`: safe),
/// and the values of secret-looking query keys (`password=`, `sslkey=`).
pub fn redact_raw(raw: &str) -> String {
    let mut out = raw.to_string();
    if let Some(at) = raw.rfind('@') {
        let start = raw.find("://").map(|i| i + 3).unwrap_or(0).min(at);
        if let Some(colon) = raw[start..at].find(':') {
            out = format!("{}:***{}", &raw[..start + colon], &raw[at..]);
        }
    }
    let Some(q) = out.find('?') else {
        return out;
    };
    let parts: Vec<String> = out[q + 1..]
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if is_secret_key(k) => format!("{k}=***"),
            _ => kv.to_string(),
        })
        .collect();
    format!("{}?{}", &out[..q], parts.join("&"))
}

fn percent_decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={s}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// The target as shown: its password, if in the URL, masked, and every node of a host list.
fn display_of(u: &url::Url, hostlist: Option<&str>, password_in_url: bool) -> String {
    let mut display = u.clone();
    if password_in_url {
        let _ = display.set_password(Some("***"));
    }
    let mut display = display.to_string();
    if let Some(list) = hostlist {
        // Show every node: the parsed URL holds only the first.
        let one_host = match u.port() {
            Some(p) => format!("{}:{p}", u.host_str().unwrap_or("")),
            None => u.host_str().unwrap_or("").to_string(),
        };
        display = display.replacen(&format!("@{one_host}"), &format!("@{list}"), 1);
    }
    display
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<TargetSpec, String> {
        TargetSpec::parse(s, |_| None)
    }

    #[test]
    fn sqlite_paths() {
        assert_eq!(
            parse("sqlite:///tmp/a.db").unwrap().sqlite_path,
            PathBuf::from("/tmp/a.db")
        );
        assert_eq!(
            parse("sqlite://rel/a.db").unwrap().sqlite_path,
            PathBuf::from("rel/a.db")
        );
        assert!(parse("sqlite://").is_err());
    }

    #[test]
    fn mysql_forms() {
        let t = parse("mysql://root:s3cret@127.0.0.1:3307/bench").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.user.as_str()),
            ("127.0.0.1", 3307, "root")
        );
        assert_eq!(t.password.as_deref(), Some("s3cret"));
        assert!(t.password_in_url);
        assert!(!t.display.contains("s3cret"));
        assert_eq!(t.database, "bench");
        let s = parse("mysql://root@localhost/db?socket=/tmp/m.sock").unwrap();
        assert_eq!(s.socket.as_deref(), Some("/tmp/m.sock"));
        assert_eq!(s.port, 3306);
    }

    #[test]
    fn postgres_forms_and_env_password() {
        let t = TargetSpec::parse("postgres://pg@localhost/db?host=/run/pg", |d| {
            (d == Dbms::Postgres).then(|| "envpw".to_string())
        })
        .unwrap();
        assert_eq!(t.socket.as_deref(), Some("/run/pg"));
        assert_eq!(t.password.as_deref(), Some("envpw"));
        assert!(!t.password_in_url);
        assert_eq!(t.port, 5432);
    }

    #[test]
    fn rejections_never_show_the_password() {
        for bad in [
            "mysql://root:hunter2@/",
            "mysql://root:hunter2@host:99999/db",
            "foo://root:hunter2@host/db",
            "mysql://:hunter2@host/db",
            "mysql://root:hunter2@host/db?bogus=1",
            "root:hunter2@host",
            "mysql://root@host/db?password=hunter2",
            "postgres://u@h/db?sslkey=hunter2&x=1",
            "mysql://root:hunter2@host/db?ssl-mode=verify-ca",
            "mysql://root:hunter2@h/db?ssl-mode=require&socket=/s",
            "mysql://ro:ot:hunter2@h:1:2/db",
            "mysql://root:hunter2@h/db?ssl-mode=nope",
            // Found by fuzzing: a '?' before the scheme hid the user part from the redaction.
            "?po%00stgres://pg:hunter2@127.0.mode\u{12}x&ssl-ca=/a",
            "mysql://u:hunter2@h/db?socket=/a@b&x=1",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(!e.contains("hunter2"), "{e}");
        }
    }

    #[test]
    fn tls_options() {
        let t = parse("postgres://u@127.0.0.1/db?ssl-mode=verify-ca&ssl-ca=/tmp/ca.pem").unwrap();
        assert_eq!(t.ssl_mode, SslMode::VerifyCa);
        assert_eq!(t.ssl_ca, Some(PathBuf::from("/tmp/ca.pem")));
        let t = parse("mysql://u@127.0.0.1/db?sslmode=require").unwrap();
        assert_eq!(t.ssl_mode, SslMode::Require);
        assert_eq!(parse("mysql://u@h/db").unwrap().ssl_mode, SslMode::Disable);
        // Prefer over a socket is allowed (plain); promises of encryption are not.
        assert!(parse("mysql://u@localhost/db?socket=/s&ssl-mode=prefer").is_ok());
        for bad in [
            "mysql://u@h/db?ssl-mode=verify-ca",
            "mysql://u@h/db?ssl-ca=/x.pem",
            "mysql://u@h/db?ssl-mode=require&ssl-ca=/x.pem",
            "mysql://u@localhost/db?socket=/s&ssl-mode=require",
            "postgres://u@localhost/db?host=/d&ssl-mode=verify-full&ssl-ca=/x",
            "postgres://u@h/db?ssl-mode=always",
            "postgres://u@h/db?ssl-ca=",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.starts_with("invalid target"), "{bad}: {e}");
        }
    }

    #[test]
    fn postgres_driver_option() {
        let p = |s| parse(s).unwrap().pg_driver;
        assert_eq!(p("postgres://u@h/db"), PgDriver::Wire);
        assert_eq!(p("postgres://u@h/db?driver=wire"), PgDriver::Wire);
        assert_eq!(
            p("postgres://u@h/db?driver=tokio_postgres"),
            PgDriver::TokioPostgres
        );
        let e = parse("postgres://u:hunter2@h/db?driver=libpq").unwrap_err();
        assert!(
            e.contains("unknown driver 'libpq'") && !e.contains("hunter2"),
            "{e}"
        );
    }

    #[test]
    fn read_replicas_route() {
        let t = parse("postgres://u@p:5432,r1:5433,r2:5434/db?read=replicas").unwrap();
        assert_eq!(t.read, ReadRoute::Replicas);
        assert_eq!(t.nodes.len(), 3);
        for bad in [
            "postgres://u@p/db?read=replicas",
            "postgres://u@p:1,r:2/db?read=some",
            "mysql://u@a:1,b:2/db?read=replicas",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.starts_with("invalid target"), "{bad}: {e}");
        }
    }

    #[test]
    fn several_hosts() {
        let t = parse("mysql://root:pw9@10.0.0.1:3307,10.0.0.2,h3:3309/db").unwrap();
        assert_eq!(
            t.nodes,
            vec![
                ("10.0.0.1".to_string(), 3307),
                ("10.0.0.2".to_string(), 3306),
                ("h3".to_string(), 3309)
            ]
        );
        assert_eq!(
            (t.host.as_str(), t.port, t.node_count()),
            ("10.0.0.1", 3307, 3)
        );
        assert_eq!(
            t.display,
            "mysql://root:***@10.0.0.1:3307,10.0.0.2,h3:3309/db"
        );
        let n1 = t.node(1);
        assert_eq!(
            (n1.host.as_str(), n1.port, n1.node_count()),
            ("10.0.0.2", 3306, 1)
        );
        assert_eq!(n1.display, "mysql://root:***@10.0.0.2:3306/db");
        assert_eq!(t.node_label(2), "h3:3309");
        let p = parse("postgres://pg@a:5432,b:5433/db").unwrap();
        assert_eq!(p.node_label(1), "b:5433");
        assert_eq!(parse("postgres://pg@a/db").unwrap().node_count(), 1);
        for bad in [
            "mysql://u:hunter2@a:1,,b/db",
            "mysql://u:hunter2@a:1,b:x/db",
            "mysql://u:hunter2@a:1,b:0/db",
            "mysql://u:hunter2@a,b/db?socket=/s",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(
                e.starts_with("invalid target") && !e.contains("hunter2"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn spider_backends() {
        let t = parse(
            "mysql://root:pw9@127.0.0.1:3300/eb?spider=127.0.0.1:3301,/tmp/b1.sock&ssl-mode=prefer",
        )
        .unwrap();
        assert!(t.is_spider());
        assert_eq!(
            t.spider,
            vec![
                Endpoint::Tcp("127.0.0.1".into(), 3301),
                Endpoint::Socket("/tmp/b1.sock".into())
            ]
        );
        assert_eq!((t.port, t.node_count()), (3300, 1));
        let b0 = t.spider_backend(0);
        assert_eq!((b0.port, b0.is_spider()), (3301, false));
        assert_eq!(
            b0.display,
            "mysql://root:***@127.0.0.1:3301/eb?ssl-mode=prefer"
        );
        assert_eq!(b0.password.as_deref(), Some("pw9"));
        let b1 = t.spider_backend(1);
        assert_eq!(b1.socket.as_deref(), Some("/tmp/b1.sock"));
        assert!(
            b1.display.contains("socket=%2Ftmp%2Fb1.sock"),
            "{}",
            b1.display
        );
        assert!(!b1.display.contains("pw9"));
        // A head on a socket, backends on the default port.
        let s =
            parse("mysql://root@localhost/eb?socket=/tmp/h.sock&spider=10.0.0.2,10.0.0.3").unwrap();
        assert_eq!(s.spider[1], Endpoint::Tcp("10.0.0.3".into(), 3306));
        for bad in [
            "mysql://u:hunter2@h:1/db?spider=",
            "mysql://u:hunter2@h:1/db?spider=a:1,,b:2",
            "mysql://u:hunter2@h:1/db?spider=a:x",
            "mysql://u:hunter2@h:1/db?spider=h:1",
            "mysql://u:hunter2@h:1/db?spider=a:2,a:2",
            "mysql://u:hunter2@h:1,h:2/db?spider=a:2",
            "postgres://u:hunter2@h:1/db?spider=a:2",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(
                e.starts_with("invalid target") && !e.contains("hunter2"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn scrub_removes_password() {
        let t = parse("mysql://root:pw123@h/db").unwrap();
        assert_eq!(t.scrub("Access denied pw123"), "Access denied ***");
    }
}
