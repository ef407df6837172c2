//! The SQL helpers workloads share: DDL files split into table and index statements, the
//! metadata table that says what was loaded, post-load housekeeping, storage engines.

use crate::db::{Conn, Dbms, TargetSpec};
use crate::error::{Context, Error, Result};
use crate::model::LoadOptions;

/// Open a connection of a workload's or a command's own: failures here are the user's to fix
/// (exit 2).
pub async fn connect(spec: &TargetSpec) -> Result<Conn> {
    Conn::connect(spec)
        .await
        .map_err(|e| Error::usage(format!("cannot connect to {}: {}", spec.display, e.message)))
}

/// The table that records what each workload loaded (size, seed, engine), so that `run`
/// reuses a prepared table only when it is exactly what the run asks for.
pub const META_TABLE: &str = "enginebench_meta";

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

/// The clause every benchmark table is created with: the engine, then `--table-options`
/// (e.g. `ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8`, `PAGE_COMPRESSED=1`), for every workload.
pub fn table_clause(engine: Option<&str>, opts: &LoadOptions) -> String {
    let mut c = engine_clause(engine);
    if !opts.table_options.is_empty() {
        if !c.is_empty() {
            c.push(' ');
        }
        c.push_str(&opts.table_options);
    }
    c
}

/// A workload's metadata with the table options in it, so that tables made with other
/// options are not taken as already loaded.
pub fn with_table_options(info: String, opts: &LoadOptions) -> String {
    if opts.table_options.is_empty() {
        info
    } else {
        format!("{info} table_options={}", opts.table_options)
    }
}

/// A workload's metadata with the target's layout in it: tables prepared on a Spider head and
/// its backends are not the tables of a plain server (nor of other backends), and the other
/// way round.
pub fn with_layout(info: String, target: &TargetSpec) -> String {
    if !target.is_spider() {
        return info;
    }
    let backends: Vec<String> = target.spider.iter().map(|b| b.to_string()).collect();
    format!("{info} spider={}", backends.join(","))
}

/// True when every table of `tables` exists and the metadata of `workload` says they hold
/// exactly `want`: then `prepare` keeps them.
pub async fn already_loaded<S: AsRef<str>>(
    conn: &mut Conn,
    tables: impl IntoIterator<Item = S>,
    workload: &str,
    want: &str,
) -> Result<bool> {
    for t in tables {
        if !conn
            .table_exists(t.as_ref())
            .await
            .ctx("checking for the tables")?
        {
            return Ok(false);
        }
    }
    Ok(read_meta(conn, workload).await?.as_deref() == Some(want))
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

/// The storage engine of `table` as the server reports it (PostgreSQL: heap; SQLite: its
/// b-tree).
pub async fn table_engine(conn: &mut Conn, table: &str) -> Result<String> {
    Ok(match conn.dbms() {
        Dbms::Mysql => conn
            .query_one(&format!(
                "SELECT ENGINE FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '{table}'"
            ))
            .await
            .ctx("reading the table's engine")?
            .unwrap_or_default(),
        Dbms::Postgres => "heap".to_string(),
        Dbms::Sqlite => "sqlite-btree".to_string(),
    })
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
