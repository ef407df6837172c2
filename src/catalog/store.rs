//! The two stores a catalog lives in, behind one small interface: an SQLite file (one per
//! user, the default) and a PostgreSQL database (a team's shared catalog). The same SQL runs
//! on both: statements are written with `?` placeholders and numbered for PostgreSQL, and the
//! few type names that differ are filled in per store.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// A value bound to a statement or read from a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Val {
    pub fn int(&self) -> Option<i64> {
        match self {
            Val::Int(i) => Some(*i),
            Val::Real(f) => Some(*f as i64),
            _ => None,
        }
    }
    pub fn real(&self) -> Option<f64> {
        match self {
            Val::Real(f) => Some(*f),
            Val::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
    pub fn text(&self) -> String {
        match self {
            Val::Text(s) => s.clone(),
            Val::Int(i) => i.to_string(),
            Val::Real(f) => f.to_string(),
            Val::Null | Val::Blob(_) => String::new(),
        }
    }
    pub fn opt_text(&self) -> Option<String> {
        match self {
            Val::Null => None,
            v => Some(v.text()),
        }
    }
}

impl From<Option<f64>> for Val {
    fn from(v: Option<f64>) -> Val {
        v.map_or(Val::Null, Val::Real)
    }
}
impl From<Option<String>> for Val {
    fn from(v: Option<String>) -> Val {
        v.map_or(Val::Null, Val::Text)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Val {
        Val::Text(v.to_string())
    }
}
impl From<String> for Val {
    fn from(v: String) -> Val {
        Val::Text(v)
    }
}
impl From<i64> for Val {
    fn from(v: i64) -> Val {
        Val::Int(v)
    }
}

/// The schema, one list of statements per version; a catalog at version N has run the
/// first N lists. A change is a new list at the end (never an edit of an old one), so every
/// catalog reaches the same tables whatever version created it.
/// `{ID}`, `{INT}`, `{REAL}`, `{BLOB}` are the type names that differ between the stores.
/// The workloads' headline figures are columns of `points` too: version 1 created the one
/// there was then (a list here is never edited), and a figure declared since gets its column
/// when a catalog is opened (`columns::add_figure_columns`), not from a new list here.
const MIGRATIONS: &[&[&str]] = &[
    &[
        "CREATE TABLE results (
        id {ID},
        identity TEXT NOT NULL UNIQUE,
        recorded_at TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL,
        workload TEXT NOT NULL,
        dbms TEXT NOT NULL,
        target TEXT NOT NULL,
        server_version TEXT NOT NULL,
        engine TEXT NOT NULL,
        options TEXT NOT NULL,
        profile TEXT,
        settings_fingerprint TEXT NOT NULL,
        settings TEXT NOT NULL,
        host TEXT NOT NULL,
        host_cores {INT} NOT NULL,
        host_memory_bytes {INT} NOT NULL,
        tool_version TEXT NOT NULL,
        tool_commit TEXT,
        fleet TEXT,
        disturbed {INT} NOT NULL,
        source TEXT NOT NULL,
        doc_zstd {BLOB} NOT NULL
    )",
        "CREATE INDEX results_workload ON results (workload, started_at)",
        "CREATE INDEX results_started ON results (started_at)",
        "CREATE INDEX results_host ON results (host)",
        "CREATE TABLE points (
        result_id {INT} NOT NULL REFERENCES results (id) ON DELETE CASCADE,
        seq {INT} NOT NULL,
        operation TEXT NOT NULL,
        threads {INT} NOT NULL,
        runs {INT} NOT NULL,
        ops_per_s {REAL},
        ops_per_s_sd {REAL},
        ops_per_s_min {REAL},
        ops_per_s_max {REAL},
        p99_us {REAL},
        client_us_per_op {REAL},
        server_us_per_op {REAL},
        tpm_c {REAL},
        disturbed {INT} NOT NULL,
        PRIMARY KEY (result_id, seq)
    )",
        "CREATE INDEX points_operation ON points (operation, threads)",
    ],
    // 2: the client's sleeps per operation (mean over the runs); for points recorded before,
    // filled from their stored files (`fill_new_columns`), empty where a file counted none.
    &["ALTER TABLE points ADD COLUMN client_sleeps_per_op {REAL}"],
    // 3: each result's identity (catalog/same.rs): the whole configuration's, the work's, and
    // their parts in words; filled from the stored files (`fill_identities`), which also drop
    // from `settings` what names one server start.
    &[
        "ALTER TABLE results ADD COLUMN config_id TEXT",
        "ALTER TABLE results ADD COLUMN work_id TEXT",
        "ALTER TABLE results ADD COLUMN config_parts TEXT",
        "CREATE INDEX results_config ON results (config_id, started_at)",
    ],
];

/// The schema version this enginebench writes.
pub const SCHEMA_VERSION: usize = MIGRATIONS.len();

pub enum Store {
    Sqlite(rusqlite::Connection),
    Postgres(Pg),
}

pub struct Pg {
    rt: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
}

/// How long a writer waits for another one (a suite beside a run, a fleet's shards) before it
/// gives up; recording is rare and short, so a wait this long means something is stuck.
const BUSY: Duration = Duration::from_secs(30);

impl Store {
    /// Open (creating the file and its folder) an SQLite catalog.
    pub fn sqlite(path: &Path) -> Result<Store, String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let c = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
        c.busy_timeout(BUSY).map_err(|e| e.to_string())?;
        // WAL: readers (history, a page) never block the writers, and writers queue on the
        // busy timeout instead of failing at once.
        // Two processes opening a new catalog at once: the switch to WAL needs the file to
        // itself and SQLite may refuse it at once ("database is locked", the busy timeout
        // not consulted; seen with two importers on a loaded host): try again until BUSY.
        let t0 = std::time::Instant::now();
        loop {
            match c.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy
                        || e.code == rusqlite::ErrorCode::DatabaseLocked =>
                {
                    if t0.elapsed() > BUSY {
                        return Err("database is locked (waited 30 s)".into());
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        c.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| e.to_string())?;
        c.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| e.to_string())?;
        Ok(Store::Sqlite(c))
    }

    /// Connect to a PostgreSQL catalog (the password from the URL or PGPASSWORD).
    pub fn postgres(url: &str) -> Result<Store, String> {
        let mut cfg: tokio_postgres::Config = url.parse().map_err(|e| format!("{e}"))?;
        if cfg.get_password().is_none() {
            if let Ok(p) = std::env::var("PGPASSWORD") {
                cfg.password(p);
            }
        }
        if cfg.get_user().is_none() {
            if let Ok(u) = std::env::var("USER") {
                cfg.user(&u);
            }
        }
        cfg.connect_timeout(Duration::from_secs(10));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let client = rt.block_on(async {
            let (client, conn) = cfg
                .connect(tokio_postgres::NoTls)
                .await
                .map_err(|e| pg_error(&e))?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            Ok::<_, String>(client)
        })?;
        Ok(Store::Postgres(Pg { rt, client }))
    }

    pub(super) fn ddl(&self, sql: &str) -> String {
        let (id, int, real, blob) = match self {
            Store::Sqlite(_) => ("INTEGER PRIMARY KEY", "INTEGER", "REAL", "BLOB"),
            Store::Postgres(_) => (
                "BIGSERIAL PRIMARY KEY",
                "BIGINT",
                "DOUBLE PRECISION",
                "BYTEA",
            ),
        };
        sql.replace("{ID}", id)
            .replace("{INT}", int)
            .replace("{REAL}", real)
            .replace("{BLOB}", blob)
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Store::Postgres(_))
    }

    /// The names of the columns of `points`.
    pub fn point_columns(&mut self) -> Result<Vec<String>, String> {
        let sql = match self {
            Store::Sqlite(_) => "SELECT name FROM pragma_table_info('points')",
            Store::Postgres(_) => {
                "SELECT CAST(column_name AS TEXT) FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = 'points'"
            }
        };
        Ok(self.query(sql, &[])?.iter().map(|r| r[0].text()).collect())
    }

    /// Bring the schema to [`SCHEMA_VERSION`], one writer at a time; refuse a catalog written
    /// by a newer enginebench (its tables may mean something this one does not know).
    /// `fill` runs in the same transaction with the version the catalog had, to fill new
    /// columns from what the catalog holds.
    pub fn migrate(
        &mut self,
        fill: impl FnOnce(&mut Store, usize) -> Result<(), String>,
    ) -> Result<(), String> {
        self.begin_write()?;
        let r = self.migrate_in_tx().and_then(|had| fill(self, had));
        match r {
            Ok(()) => self.commit(),
            Err(e) => {
                let _ = self.rollback();
                Err(e)
            }
        }
    }

    /// The schema version the catalog had (0: none).
    fn migrate_in_tx(&mut self) -> Result<usize, String> {
        self.exec(
            "CREATE TABLE IF NOT EXISTS catalog_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            &[],
        )?;
        let rows = self.query(
            "SELECT value FROM catalog_meta WHERE key = 'schema_version'",
            &[],
        )?;
        let have: usize = match rows.first() {
            Some(r) => r[0]
                .text()
                .parse()
                .map_err(|_| "catalog_meta.schema_version is not a number".to_string())?,
            None => 0,
        };
        if have > SCHEMA_VERSION {
            return Err(format!(
                "the catalog has schema version {have}, newer than this enginebench's {SCHEMA_VERSION}: use a newer enginebench"
            ));
        }
        for list in &MIGRATIONS[have..] {
            for stmt in *list {
                let sql = self.ddl(stmt);
                self.exec(&sql, &[])?;
            }
        }
        if have < SCHEMA_VERSION {
            let v = Val::Text(SCHEMA_VERSION.to_string());
            if have == 0 {
                self.exec(
                    "INSERT INTO catalog_meta (key, value) VALUES ('schema_version', ?)",
                    &[v],
                )?;
            } else {
                self.exec(
                    "UPDATE catalog_meta SET value = ? WHERE key = 'schema_version'",
                    &[v],
                )?;
            }
        }
        Ok(have)
    }

    /// Start a write transaction that holds the catalog's write lock from its first
    /// statement (SQLite: IMMEDIATE, so two writers queue instead of failing on upgrade;
    /// PostgreSQL: an advisory lock, so two first opens do not both create the tables).
    pub fn begin_write(&mut self) -> Result<(), String> {
        match self {
            Store::Sqlite(c) => c
                .execute_batch("BEGIN IMMEDIATE")
                .map_err(|e| e.to_string()),
            Store::Postgres(p) => p.rt.block_on(async {
                p.client
                    .batch_execute("BEGIN; SELECT pg_advisory_xact_lock(4242036)")
                    .await
                    .map_err(|e| pg_error(&e))
            }),
        }
    }

    pub fn commit(&mut self) -> Result<(), String> {
        self.batch("COMMIT")
    }

    pub fn rollback(&mut self) -> Result<(), String> {
        self.batch("ROLLBACK")
    }

    fn batch(&mut self, sql: &str) -> Result<(), String> {
        match self {
            Store::Sqlite(c) => c.execute_batch(sql).map_err(|e| e.to_string()),
            Store::Postgres(p) => {
                p.rt.block_on(p.client.batch_execute(sql))
                    .map_err(|e| pg_error(&e))
            }
        }
    }

    /// Run one statement; the rows it changed.
    pub fn exec(&mut self, sql: &str, params: &[Val]) -> Result<u64, String> {
        match self {
            Store::Sqlite(c) => {
                let mut st = c.prepare_cached(sql).map_err(|e| e.to_string())?;
                let n = st
                    .execute(rusqlite::params_from_iter(params.iter().map(sqlite_val)))
                    .map_err(|e| e.to_string())?;
                Ok(n as u64)
            }
            Store::Postgres(p) => {
                let sql = crate::db::numbered_placeholders(sql);
                let args = pg_args(params);
                let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                    args.iter().map(|a| a.as_ref()).collect();
                p.rt.block_on(p.client.execute(sql.as_str(), &refs))
                    .map_err(|e| pg_error(&e))
            }
        }
    }

    /// Run one query; every row's values in the select list's order.
    pub fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Vec<Val>>, String> {
        match self {
            Store::Sqlite(c) => {
                let mut st = c.prepare_cached(sql).map_err(|e| e.to_string())?;
                let n = st.column_count();
                let mut rows = st
                    .query(rusqlite::params_from_iter(params.iter().map(sqlite_val)))
                    .map_err(|e| e.to_string())?;
                let mut out = Vec::new();
                while let Some(r) = rows.next().map_err(|e| e.to_string())? {
                    let mut row = Vec::with_capacity(n);
                    for i in 0..n {
                        use rusqlite::types::ValueRef;
                        row.push(match r.get_ref(i).map_err(|e| e.to_string())? {
                            ValueRef::Null => Val::Null,
                            ValueRef::Integer(i) => Val::Int(i),
                            ValueRef::Real(f) => Val::Real(f),
                            ValueRef::Text(t) => Val::Text(String::from_utf8_lossy(t).into()),
                            ValueRef::Blob(b) => Val::Blob(b.to_vec()),
                        });
                    }
                    out.push(row);
                }
                Ok(out)
            }
            Store::Postgres(p) => {
                let sql = crate::db::numbered_placeholders(sql);
                let args = pg_args(params);
                let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                    args.iter().map(|a| a.as_ref()).collect();
                let rows =
                    p.rt.block_on(p.client.query(sql.as_str(), &refs))
                        .map_err(|e| pg_error(&e))?;
                rows.iter().map(pg_row).collect()
            }
        }
    }
}

fn sqlite_val(v: &Val) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match v {
        Val::Null => Value::Null,
        Val::Int(i) => Value::Integer(*i),
        Val::Real(f) => Value::Real(*f),
        Val::Text(s) => Value::Text(s.clone()),
        Val::Blob(b) => Value::Blob(b.clone()),
    }
}

/// A NULL parameter of whatever type the statement needs (PostgreSQL types every parameter,
/// and `Option<String>` would be refused for a number column).
#[derive(Debug)]
struct AnyNull;

impl tokio_postgres::types::ToSql for AnyNull {
    fn to_sql(
        &self,
        _: &tokio_postgres::types::Type,
        _: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        Ok(tokio_postgres::types::IsNull::Yes)
    }
    fn accepts(_: &tokio_postgres::types::Type) -> bool {
        true
    }
    tokio_postgres::types::to_sql_checked!();
}

fn pg_args(params: &[Val]) -> Vec<Box<dyn tokio_postgres::types::ToSql + Sync>> {
    params
        .iter()
        .map(|v| -> Box<dyn tokio_postgres::types::ToSql + Sync> {
            match v {
                Val::Null => Box::new(AnyNull),
                Val::Int(i) => Box::new(*i),
                Val::Real(f) => Box::new(*f),
                Val::Text(s) => Box::new(s.clone()),
                Val::Blob(b) => Box::new(b.clone()),
            }
        })
        .collect()
}

fn pg_row(r: &tokio_postgres::Row) -> Result<Vec<Val>, String> {
    use tokio_postgres::types::Type;
    let mut row = Vec::with_capacity(r.len());
    for (i, c) in r.columns().iter().enumerate() {
        let e = |e: tokio_postgres::Error| pg_error(&e);
        let t = c.type_();
        let v = if *t == Type::INT8 {
            r.try_get::<_, Option<i64>>(i).map_err(e)?.map(Val::Int)
        } else if *t == Type::INT4 {
            r.try_get::<_, Option<i32>>(i)
                .map_err(e)?
                .map(|x| Val::Int(x.into()))
        } else if *t == Type::FLOAT8 {
            r.try_get::<_, Option<f64>>(i).map_err(e)?.map(Val::Real)
        } else if *t == Type::BYTEA {
            r.try_get::<_, Option<Vec<u8>>>(i)
                .map_err(e)?
                .map(Val::Blob)
        } else {
            r.try_get::<_, Option<String>>(i).map_err(e)?.map(Val::Text)
        };
        row.push(v.unwrap_or(Val::Null));
    }
    Ok(row)
}

/// A PostgreSQL error in one line: the server's message when there is one.
fn pg_error(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => format!("{}: {}", d.code().code(), d.message()),
        None => crate::error::one_line(&e.to_string()),
    }
}

/// The default catalog file of this user: `$XDG_DATA_HOME/enginebench/catalog.db`, else
/// `~/.local/share/enginebench/catalog.db` (the XDG base-directory default).
pub fn default_path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        Some(d) if Path::new(&d).is_absolute() => PathBuf::from(d),
        _ => {
            PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".local/share")
        }
    };
    Some(base.join("enginebench").join("catalog.db"))
}
