//! Workloads: one folder per benchmark. Shared here: DDL files split into table and index
//! statements, the metadata table that says what was loaded, and post-load housekeeping.

pub mod micro_read;
pub mod rng;

use crate::error::{Context, Error, Result};
use crate::target::{Conn, Dbms};

/// The table that records what each workload loaded (size, seed, engine), so that `run`
/// reuses a prepared table only when it is exactly what the run asks for.
pub const META_TABLE: &str = "enginebench_meta";

/// The workloads this build knows.
pub const WORKLOADS: [&str; 1] = ["micro-read"];

/// Split a schema file into (table statements, index statements) at the `-- indexes` line,
/// dropping comments, and substitute `{engine}`.
pub fn ddl(schema: &str, engine_clause: &str) -> (Vec<String>, Vec<String>) {
    let (tables, indexes) = schema.split_once("-- indexes").unwrap_or((schema, ""));
    let split = |s: &str| -> Vec<String> {
        let body: String = s
            .lines()
            .filter(|l| !l.trim_start().starts_with("--"))
            .map(|l| format!("{l}\n"))
            .collect();
        body.split(';')
            .map(|st| st.trim().replace("{engine}", engine_clause))
            .filter(|st| !st.is_empty())
            .collect()
    };
    (split(tables), split(indexes))
}

/// `ENGINE=<name>` for MySQL when an engine was chosen, else nothing (the server's default).
pub fn engine_clause(engine: Option<&str>) -> String {
    engine.map(|e| format!("ENGINE={e}")).unwrap_or_default()
}

pub async fn read_meta(conn: &mut Conn, workload: &str) -> Result<Option<String>> {
    if !conn
        .table_exists(META_TABLE)
        .await
        .ctx("reading the metadata table")?
    {
        return Ok(None);
    }
    conn.query_one(&format!(
        "SELECT info FROM {META_TABLE} WHERE workload = '{workload}'"
    ))
    .await
    .ctx("reading the metadata table")
}

pub async fn write_meta(conn: &mut Conn, workload: &str, info: &str) -> Result<()> {
    let create = format!("CREATE TABLE IF NOT EXISTS {META_TABLE} (workload varchar(64) PRIMARY KEY, info varchar(2000))");
    conn.execute(&create)
        .await
        .ctx("creating the metadata table")?;
    let info = info.replace('\'', "''");
    conn.execute(&format!(
        "DELETE FROM {META_TABLE} WHERE workload = '{workload}'"
    ))
    .await
    .ctx("writing metadata")?;
    conn.execute(&format!(
        "INSERT INTO {META_TABLE} (workload, info) VALUES ('{workload}', '{info}')"
    ))
    .await
    .ctx("writing metadata")
}

pub async fn delete_meta(conn: &mut Conn, workload: &str) -> Result<()> {
    if conn
        .table_exists(META_TABLE)
        .await
        .ctx("reading the metadata table")?
    {
        conn.execute(&format!(
            "DELETE FROM {META_TABLE} WHERE workload = '{workload}'"
        ))
        .await
        .ctx("writing metadata")?;
    }
    Ok(())
}

/// After a load: fresh statistics, and on PostgreSQL a vacuum (so that autovacuum does not
/// disturb the first timed run) and a checkpoint when the role may run one.
pub async fn after_load(conn: &mut Conn, tables: &[&str]) -> Result<()> {
    for t in tables {
        let sql = match conn.dbms() {
            Dbms::Mysql => format!("ANALYZE TABLE {t}"),
            Dbms::Postgres => format!("VACUUM ANALYZE {t}"),
            Dbms::Sqlite => format!("ANALYZE {t}"),
        };
        conn.query(&sql).await.ctx(format!("analyzing {t}"))?;
    }
    match conn.dbms() {
        Dbms::Postgres => {
            let _ = conn.execute("CHECKPOINT").await;
        }
        Dbms::Sqlite => {
            let _ = conn.query("PRAGMA wal_checkpoint(TRUNCATE)").await;
        }
        Dbms::Mysql => {}
    }
    Ok(())
}

/// The storage engines a MySQL-family server offers, canonical names.
pub async fn mysql_engines(conn: &mut Conn) -> Result<Vec<String>> {
    let rows = conn
        .query("SHOW ENGINES")
        .await
        .ctx("listing the server's storage engines")?;
    Ok(rows
        .into_iter()
        .filter(|r| {
            matches!(
                r.get(1).cloned().flatten().as_deref(),
                Some("YES" | "DEFAULT")
            )
        })
        .filter_map(|r| r.into_iter().next().flatten())
        .collect())
}

/// Check `--engine` against what the server offers; returns the server's spelling.
pub async fn resolve_engine(conn: &mut Conn, wanted: &str) -> Result<String> {
    let engines = mysql_engines(conn).await?;
    let alias = if wanted.eq_ignore_ascii_case("myrocks") {
        "ROCKSDB"
    } else {
        wanted
    };
    engines.iter().find(|e| e.eq_ignore_ascii_case(alias)).cloned().ok_or_else(|| {
        Error::usage(format!(
            "the server has no storage engine '{wanted}'; it offers: {} (RocksDB needs the mariadb-plugin-rocksdb package and plugin-load-add=ha_rocksdb)",
            engines.join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn ddl_split() {
        let (t, i) = super::ddl(
            "-- c\nCREATE TABLE a (x int) {engine};\n-- indexes\nCREATE INDEX i ON a (x);\n",
            "ENGINE=MyISAM",
        );
        assert_eq!(t, vec!["CREATE TABLE a (x int) ENGINE=MyISAM"]);
        assert_eq!(i, vec!["CREATE INDEX i ON a (x)"]);
    }
}
