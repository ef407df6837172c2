//! What enginebench reads from a server around the measured runs: its settings (once), status
//! counters (before/after every run), the engine's own status text and table sizes (after the
//! last run of a point).

use std::collections::BTreeMap;

use crate::db::{Conn, Dbms};
use crate::model::{DiskUsage, TableSize};

/// Server settings and which of them differ from the compiled-in default.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub values: BTreeMap<String, String>,
    pub non_default: Vec<String>,
}

/// MariaDB: information_schema.SYSTEM_VARIABLES (what SHOW GLOBAL VARIABLES shows, plus where
/// each value came from); PostgreSQL: pg_settings.
pub async fn settings(conn: &mut Conn) -> Settings {
    let sql = match conn.dbms() {
        Dbms::Mysql => {
            "SELECT LOWER(VARIABLE_NAME), COALESCE(GLOBAL_VALUE, ''), \
             CASE WHEN GLOBAL_VALUE_ORIGIN IN ('CONFIG', 'COMMAND-LINE', 'SQL') \
                  AND COALESCE(GLOBAL_VALUE, '') <> COALESCE(DEFAULT_VALUE, '') THEN 1 ELSE 0 END \
             FROM information_schema.SYSTEM_VARIABLES"
        }
        Dbms::Postgres => {
            "SELECT name, setting || COALESCE(unit, ''), \
             CASE WHEN source NOT IN ('default', 'override', 'client', 'session') \
                  AND setting IS DISTINCT FROM boot_val THEN 1 ELSE 0 END FROM pg_settings"
        }
        Dbms::Sqlite => return Settings::default(),
    };
    let rows = conn.query(sql).await.unwrap_or_default();
    let mut s = Settings::default();
    for r in rows {
        let mut it = r.into_iter();
        let (Some(Some(k)), Some(v), Some(nd)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        // Lifecycle settings name this machine's temporary paths and ports: not tuning.
        if nd.as_deref() == Some("1") && !LIFECYCLE.contains(&k.as_str()) {
            s.non_default.push(k.clone());
        }
        s.values.insert(k, v.unwrap_or_default());
    }
    s.non_default.sort();
    s
}

/// Settings enginebench sets to run a private server (paths, port, socket): never a difference
/// worth showing.
pub const LIFECYCLE: &[&str] = &[
    "datadir",
    "tmpdir",
    "socket",
    "port",
    "bind_address",
    "pid_file",
    "log_error",
    "plugin_load_add",
    "general_log_file",
    "slow_query_log_file",
    "log_basename",
    "hostname",
    "data_directory",
    "config_file",
    "hba_file",
    "ident_file",
    "unix_socket_directories",
    "listen_addresses",
    "external_pid_file",
    "innodb_data_home_dir",
    "innodb_log_group_home_dir",
    "aria_log_dir_path",
    "rocksdb_datadir",
    "rocksdb_wal_dir",
    "timestamp",
    "pseudo_thread_id",
    "rand_seed1",
    "rand_seed2",
    "server_uid",
    "gtid_domain_id",
    "in_transaction",
    "warning_count",
    "error_count",
];

/// Settings that differ between two starts of the same configuration, beyond [`LIFECYCLE`]:
/// names that echo a lifecycle setting (MariaDB's report_port is the port) or hold a private
/// server's folders. Found by starting one profile twice and comparing (tests/it/catalog.rs).
pub const PER_START: &[&str] = &[
    "report_port",
    "slave_load_tmpdir",
    "wsrep_data_home_dir",
    "wsrep_node_address",
    "wsrep_node_incoming_address",
    "wsrep_node_name",
    "wsrep_cluster_address",
    "wsrep_sst_receive_address",
    "server_id",
    "log_bin_basename",
    "log_bin_index",
    "relay_log_basename",
    "relay_log_index",
    "stats_temp_directory",
];

/// Whether setting `name` at `value` names one start of a server rather than its configuration:
/// a lifecycle setting, one of [`PER_START`], or any value inside a private server's folders
/// (`/tmp/eb-srv-…`, `/tmp/eb-sock-…`). Such a setting is never a difference between results.
pub fn ephemeral(name: &str, value: &str) -> bool {
    LIFECYCLE.contains(&name)
        || PER_START.contains(&name)
        || value.contains("/eb-srv-")
        || value.contains("/eb-sock-")
}

/// Status counters for deltas around each measured run. PostgreSQL: pg_stat_database of the
/// benchmark database and pg_stat_bgwriter (prefixed `bgwriter.`).
pub async fn counters(conn: &mut Conn) -> BTreeMap<String, f64> {
    let sql = match conn.dbms() {
        Dbms::Mysql => "SHOW GLOBAL STATUS",
        Dbms::Postgres => {
            "SELECT k, v FROM (SELECT xact_commit, xact_rollback, blks_read, blks_hit, tup_returned, \
                 tup_fetched, tup_inserted, tup_updated, tup_deleted, temp_bytes, deadlocks \
                 FROM pg_stat_database WHERE datname = current_database()) d, \
             LATERAL (VALUES ('xact_commit', xact_commit::float8), ('xact_rollback', xact_rollback), \
                 ('blks_read', blks_read), ('blks_hit', blks_hit), ('tup_returned', tup_returned), \
                 ('tup_fetched', tup_fetched), ('tup_inserted', tup_inserted), ('tup_updated', tup_updated), \
                 ('tup_deleted', tup_deleted), ('temp_bytes', temp_bytes), ('deadlocks', deadlocks)) x(k, v) \
             UNION ALL \
             SELECT 'bgwriter.' || k, v FROM pg_stat_bgwriter b, \
             LATERAL (VALUES ('checkpoints_timed', b.checkpoints_timed::float8), ('checkpoints_req', b.checkpoints_req), \
                 ('checkpoint_write_time_ms', b.checkpoint_write_time), ('checkpoint_sync_time_ms', b.checkpoint_sync_time), \
                 ('buffers_checkpoint', b.buffers_checkpoint), ('buffers_clean', b.buffers_clean), \
                 ('maxwritten_clean', b.maxwritten_clean), ('buffers_backend', b.buffers_backend), \
                 ('buffers_backend_fsync', b.buffers_backend_fsync), ('buffers_alloc', b.buffers_alloc)) x(k, v)"
        }
        Dbms::Sqlite => return BTreeMap::new(),
    };
    let rows = conn.query(sql).await.unwrap_or_default();
    rows.into_iter()
        .filter_map(|r| {
            let mut it = r.into_iter();
            let k = it.next().flatten()?;
            let v: f64 = it.next().flatten()?.parse().ok()?;
            Some((k, v))
        })
        .collect()
}

/// The engine's own status text: `SHOW ENGINE INNODB STATUS` or `SHOW ENGINE ROCKSDB STATUS`
/// (MariaDB only). None for engines without one.
pub async fn engine_status(conn: &mut Conn, engine: &str) -> Option<String> {
    if conn.dbms() != Dbms::Mysql {
        return None;
    }
    let e = engine.to_ascii_uppercase();
    if e != "INNODB" && e != "ROCKSDB" {
        return None;
    }
    let rows = conn.query(&format!("SHOW ENGINE {e} STATUS")).await.ok()?;
    // Rows are (Type, Name, Status); RocksDB returns several.
    let text: Vec<String> = rows
        .into_iter()
        .filter_map(|r| {
            let name = r.get(1).cloned().flatten().unwrap_or_default();
            let st = r.get(2).cloned().flatten()?;
            Some(if name.is_empty() {
                st
            } else {
                format!("== {name}\n{st}")
            })
        })
        .collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

/// Force the engine's data to disk, then measure the data folder's allocated size. Only for a
/// server whose data directory this machine can read (a local server); None otherwise.
/// MariaDB: innodb_max_dirty_pages_pct is set to 0 until no page is dirty and then restored,
/// and RocksDB memtables are flushed; PostgreSQL: CHECKPOINT (servers.md: without the flush
/// about half of the written data is missing from the files).
pub async fn disk_usage(conn: &mut Conn) -> Option<DiskUsage> {
    let dir_sql = match conn.dbms() {
        Dbms::Mysql => "SELECT @@datadir",
        Dbms::Postgres => "SHOW data_directory",
        Dbms::Sqlite => return None,
    };
    let dir = conn.query_one(dir_sql).await.ok().flatten()?;
    if std::fs::read_dir(&dir).is_err() {
        return None;
    }
    let t0 = std::time::Instant::now();
    let flushed = match conn.dbms() {
        Dbms::Mysql => {
            let _ = conn
                .execute("SET GLOBAL rocksdb_force_flush_memtable_now=1")
                .await;
            let old = conn
                .query_one("SELECT @@innodb_max_dirty_pages_pct")
                .await
                .ok()
                .flatten();
            let mut ok = conn
                .execute("SET GLOBAL innodb_max_dirty_pages_pct=0")
                .await
                .is_ok();
            let dirty_sql = "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS \
                             WHERE VARIABLE_NAME = 'INNODB_BUFFER_POOL_PAGES_DIRTY'";
            while ok {
                match conn.query_one(dirty_sql).await.ok().flatten().as_deref() {
                    Some("0") | None => break,
                    _ if t0.elapsed() > std::time::Duration::from_secs(30) => ok = false,
                    _ => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
                }
            }
            if let Some(v) = old {
                let _ = conn
                    .execute(&format!("SET GLOBAL innodb_max_dirty_pages_pct={v}"))
                    .await;
            }
            ok
        }
        _ => conn.execute("CHECKPOINT").await.is_ok(),
    };
    Some(DiskUsage {
        allocated_bytes: allocated_bytes(std::path::Path::new(&dir)),
        path: dir,
        flushed,
        flush_s: t0.elapsed().as_secs_f64(),
    })
}

/// Sum of allocated blocks under `dir` (files that vanish while walking are skipped).
pub fn allocated_bytes(dir: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else {
                total += m.blocks() * 512;
            }
        }
    }
    total
}

/// Sizes of the tables of the benchmark database (information_schema.TABLES on MariaDB; heap
/// and index relation sizes on PostgreSQL).
pub async fn table_sizes(conn: &mut Conn) -> Vec<TableSize> {
    let sql = match conn.dbms() {
        Dbms::Mysql => {
            "SELECT TABLE_NAME, COALESCE(TABLE_ROWS, 0), COALESCE(DATA_LENGTH, 0), COALESCE(INDEX_LENGTH, 0) \
             FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME"
        }
        Dbms::Postgres => {
            "SELECT c.relname, GREATEST(c.reltuples, 0)::bigint, pg_table_size(c.oid), pg_indexes_size(c.oid) \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind = 'r' AND n.nspname = current_schema() ORDER BY c.relname"
        }
        Dbms::Sqlite => return Vec::new(),
    };
    let rows = conn.query(sql).await.unwrap_or_default();
    rows.into_iter()
        .filter_map(|r| {
            let n = |i: usize| -> u64 {
                r.get(i)
                    .cloned()
                    .flatten()
                    .and_then(|v| v.parse::<f64>().ok())
                    .unwrap_or(0.0) as u64
            };
            Some(TableSize {
                table: r.first().cloned().flatten()?,
                rows_estimate: n(1),
                data_bytes: n(2),
                index_bytes: n(3),
            })
        })
        .collect()
}

/// Settings that differ between servers, and settings equal everywhere but not at their
/// default: what a reader must know before comparing results side by side.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SettingsDiff {
    /// name → value per server (in the order given); absent values are "".
    pub differ: BTreeMap<String, Vec<String>>,
    /// name → the common value.
    pub equal_non_default: BTreeMap<String, String>,
}

pub fn diff(servers: &[(&BTreeMap<String, String>, &[String])]) -> SettingsDiff {
    let mut out = SettingsDiff::default();
    let mut names: std::collections::BTreeSet<&String> = Default::default();
    for (v, _) in servers {
        names.extend(v.keys());
    }
    for n in names {
        let vals: Vec<String> = servers
            .iter()
            .map(|(v, _)| v.get(n).cloned().unwrap_or_default())
            .collect();
        if vals.iter().any(|v| ephemeral(n, v)) {
            continue;
        }
        if vals.iter().any(|x| x != &vals[0]) {
            out.differ.insert(n.clone(), vals);
        } else if servers.iter().any(|(_, nd)| nd.contains(n)) {
            out.equal_non_default.insert(n.clone(), vals[0].clone());
        }
    }
    out
}

/// How one node's settings differ from node 0's: every setting whose value differs (this
/// node's value; "" for a setting it lacks), and the settings set away from their default on
/// this node but not on node 0. Unlike [`diff`] nothing is left out: a node's own port, paths
/// and name differ by nature, and the report says so.
pub fn node_diff(node0: &Settings, node: &Settings) -> (BTreeMap<String, String>, Vec<String>) {
    let mut differ = BTreeMap::new();
    for (k, v) in &node.values {
        if node0.values.get(k) != Some(v) {
            differ.insert(k.clone(), v.clone());
        }
    }
    for k in node0.values.keys() {
        if !node.values.contains_key(k) {
            differ.insert(k.clone(), String::new());
        }
    }
    let non_default = node
        .non_default
        .iter()
        .filter(|k| !node0.non_default.contains(k))
        .cloned()
        .collect();
    (differ, non_default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_diff_keeps_what_differs_from_node_0() {
        let set = |kv: &[(&str, &str)], nd: &[&str]| Settings {
            values: kv
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            non_default: nd.iter().map(|k| k.to_string()).collect(),
        };
        let n0 = set(&[("port", "3306"), ("a", "1"), ("gone", "x")], &["a"]);
        let n1 = set(&[("port", "3307"), ("a", "1"), ("new", "y")], &["a", "new"]);
        let (differ, nd) = node_diff(&n0, &n1);
        let want: BTreeMap<String, String> = [("gone", ""), ("new", "y"), ("port", "3307")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(differ, want);
        assert_eq!(nd, vec!["new".to_string()]);
        assert_eq!(node_diff(&n0, &n0), (BTreeMap::new(), Vec::new()));
    }

    #[test]
    fn diff_lists_differences_and_shared_non_defaults() {
        let a: BTreeMap<String, String> = [("a", "1"), ("b", "2"), ("c", "3"), ("datadir", "/x")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut b = a.clone();
        b.insert("a".into(), "9".into());
        b.insert("datadir".into(), "/y".into());
        let nd = vec!["b".to_string()];
        let d = diff(&[(&a, &nd), (&b, &nd)]);
        assert_eq!(d.differ.keys().collect::<Vec<_>>(), vec!["a"]);
        assert_eq!(d.differ["a"], vec!["1", "9"]);
        assert_eq!(d.equal_non_default.keys().collect::<Vec<_>>(), vec!["b"]);
    }
}
