//! Server config profiles: plain option files in the repo (`profiles/<server>/<name>.cnf|conf`),
//! compiled into the binary so that it works from any folder. A profile may also be a path.

use crate::error::{Error, Result};

use super::Kind;

/// (server, profile name, file text), by name: the files of `profiles/<server>/`, compiled in by
/// build.rs. The files carry comments citing where each number comes from.
fn profiles() -> impl Iterator<Item = (Kind, &'static str, &'static str)> {
    let of = |kind: Kind, files: &'static [(&'static str, &'static str)]| {
        files.iter().map(move |(name, text)| (kind, *name, *text))
    };
    of(Kind::Mariadb, crate::files::PROFILES_MARIADB)
        .chain(of(Kind::Postgres, crate::files::PROFILES_POSTGRES))
}

pub fn names(kind: Kind) -> Vec<&'static str> {
    profiles().filter(|p| p.0 == kind).map(|p| p.1).collect()
}

/// The text of profile `name` (a built-in name, or a path to an option file).
pub fn text(kind: Kind, name: &str) -> Result<String> {
    if let Some(p) = profiles().find(|p| p.0 == kind && p.1 == name) {
        return Ok(p.2.to_string());
    }
    if name.contains('/') || name.ends_with(".cnf") || name.ends_with(".conf") {
        return std::fs::read_to_string(name)
            .map_err(|e| Error::usage(format!("--server: cannot read profile file {name}: {e}")));
    }
    Err(Error::usage(format!(
        "--server: unknown {} profile '{name}'; known: {} (or give a path to an option file)",
        kind.name(),
        names(kind).join(", ")
    )))
}

/// The `key = value` settings of an option file, in order (later lines win), comments and
/// section headers skipped. Keys are normalized (`-` → `_`, `loose-` dropped) so that the
/// names match what the server reports.
pub fn settings(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with('#') && !l.starts_with('[') && !l.starts_with(';')
        })
        .map(|l| match l.split_once('=') {
            Some((k, v)) => (normalize(k), v.trim().trim_matches('\'').to_string()),
            None => (normalize(l), "ON".to_string()),
        })
        .collect()
}

/// Connections a managed server keeps beyond the benchmark's own: the tool's admin
/// connection, a DDL or sampling connection, a person looking at it with a client.
pub const SPARE_CONNECTIONS: usize = 20;

/// Settings to add so that a managed server takes `connections` benchmark connections: its
/// connection limit and (MariaDB) its listen queue, each only when the user did not set it
/// with --server-opt and the profile's value (or the server's default) is too small.
/// `text` is the effective option file (profile, then --server-opt lines).
pub fn fitted(
    kind: Kind,
    text: &str,
    user_opts: &[(String, String)],
    connections: usize,
) -> Vec<(String, String)> {
    if connections == 0 {
        return Vec::new();
    }
    let set = settings(text);
    let user_set = |k: &str| user_opts.iter().any(|(u, _)| normalize(u) == k);
    let value = |k: &str| -> Option<u64> {
        set.iter()
            .rev()
            .find(|(n, _)| n == k)
            .and_then(|(_, v)| v.parse().ok())
    };
    let mut out = Vec::new();
    let need = (connections + SPARE_CONNECTIONS) as u64;
    // Built-in defaults: MariaDB 10.11 151, PostgreSQL 100.
    let default_max = match kind {
        Kind::Mariadb => 151,
        Kind::Postgres => 100,
    };
    let mut max_conn = value("max_connections").unwrap_or(default_max);
    if max_conn < need && !user_set("max_connections") {
        max_conn = need;
        out.push(("max_connections".to_string(), need.to_string()));
    }
    if kind == Kind::Mariadb {
        // MariaDB: back_log defaults to 50 + max_connections / 5 (at most 65535, the
        // variable's maximum); the kernel caps the queue at net.core.somaxconn.
        let back_log = value("back_log").unwrap_or(50 + max_conn / 5);
        let want = (connections as u64).min(65535);
        if back_log < want && !user_set("back_log") {
            out.push(("back_log".to_string(), want.to_string()));
        }
        // Prepared statements count against one server-wide limit (default 16382): TPC-C
        // prepared 73 per connection (41 now) and stopped at connection 224 of 1,000. Room for
        // 128 per connection (the variable's maximum is 4194304).
        let stmts = value("max_prepared_stmt_count").unwrap_or(16382);
        let want = (connections as u64 * 128).min(4_194_304);
        if stmts < want && !user_set("max_prepared_stmt_count") {
            out.push(("max_prepared_stmt_count".to_string(), want.to_string()));
        }
    }
    out
}

pub fn normalize(key: &str) -> String {
    let k = key.trim().replace('-', "_");
    k.strip_prefix("loose_").unwrap_or(&k).to_string()
}

/// Check a `--server-opt key=value`: a plain option name and a value without newlines or quotes
/// (it is written into an option file, never onto a command line).
pub fn parse_opt(s: &str) -> Result<(String, String)> {
    let (k, v) = s.split_once('=').ok_or_else(|| {
        Error::usage(format!(
            "--server-opt: '{s}' is not key=value (e.g. innodb_buffer_pool_size=1G)"
        ))
    })?;
    let k = k.trim();
    if k.is_empty()
        || !k
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
    {
        return Err(Error::usage(format!(
            "--server-opt: '{k}' is not an option name"
        )));
    }
    if v.contains(['\n', '\r', '\'', '"', '\\']) {
        return Err(Error::usage(format!(
            "--server-opt {k}: the value must not contain quotes, backslashes or newlines"
        )));
    }
    Ok((k.to_string(), v.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitted_raises_only_what_the_user_left() {
        let small = text(Kind::Mariadb, "small").unwrap();
        let f = fitted(Kind::Mariadb, &small, &[], 1024);
        assert_eq!(
            f,
            vec![
                ("max_connections".to_string(), "1044".to_string()),
                ("back_log".to_string(), "1024".to_string()),
                ("max_prepared_stmt_count".to_string(), "131072".to_string())
            ]
        );
        // The user's max_connections stays; back_log is sized from it when not set.
        let user = vec![("max_connections".to_string(), "50".to_string())];
        let t = format!("{small}\nmax_connections = 50\n");
        assert_eq!(
            fitted(Kind::Mariadb, &t, &user, 100),
            vec![("back_log".to_string(), "100".to_string())]
        );
        let user = vec![("back-log".to_string(), "16".to_string())];
        let t = format!("{small}\nback_log = 16\n");
        assert_eq!(
            fitted(Kind::Mariadb, &t, &user, 256),
            vec![("max_prepared_stmt_count".to_string(), "32768".to_string())]
        );
        // Enough already: nothing added.
        assert!(fitted(Kind::Mariadb, &small, &[], 8).is_empty());
        let pg = text(Kind::Postgres, "small").unwrap();
        assert_eq!(
            fitted(Kind::Postgres, &pg, &[], 512),
            vec![("max_connections".to_string(), "532".to_string())]
        );
    }

    #[test]
    fn every_profile_allows_256_threads() {
        for (kind, name, text) in profiles() {
            let s = settings(text);
            let mc: u64 = s
                .iter()
                .rev()
                .find(|(k, _)| k == "max_connections")
                .unwrap_or_else(|| panic!("{name} of {kind:?} sets no max_connections"))
                .1
                .parse()
                .unwrap();
            assert!(mc >= 260, "{kind:?}:{name} max_connections {mc}");
        }
    }

    #[test]
    fn parses_settings_and_opts() {
        let s =
            settings("[mariadbd]\n# c\nloose-rocksdb-block-cache-size = 64M\nskip_name_resolve\n");
        assert_eq!(s[0], ("rocksdb_block_cache_size".into(), "64M".into()));
        assert_eq!(s[1].0, "skip_name_resolve");
        assert!(parse_opt("a=1").is_ok());
        assert!(parse_opt("a").is_err());
        assert!(parse_opt("a=1'").is_err());
        assert!(parse_opt("a b=1").is_err());
        assert!(text(Kind::Postgres, "nope").is_err());
    }
}
