//! The storage formats the compression workload tries, per DBMS, and how each one's table is
//! created, flushed and sized.

use crate::db::{Conn, Dbms};

/// How a format's table is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// InnoDB, uncompressed (ROW_FORMAT=DYNAMIC, the default).
    Innodb,
    /// InnoDB ROW_FORMAT=COMPRESSED with this KEY_BLOCK_SIZE (KiB).
    InnodbRow(u32),
    /// InnoDB PAGE_COMPRESSED=1 with this value of the global innodb_compression_algorithm.
    InnodbPage(&'static str),
    /// MyRocks with its own column family using this RocksDB compression type.
    Rocksdb(&'static str),
    Myisam,
    Aria,
    /// PostgreSQL heap; text columns compressed (TOAST) with this method.
    Pg(&'static str),
    Sqlite,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub name: &'static str,
    pub kind: Kind,
}

const MYSQL: [Format; 15] = [
    f("innodb", Kind::Innodb),
    f("innodb-row-compressed-8k", Kind::InnodbRow(8)),
    f("innodb-row-compressed-4k", Kind::InnodbRow(4)),
    f("innodb-page-zlib", Kind::InnodbPage("zlib")),
    f("innodb-page-lz4", Kind::InnodbPage("lz4")),
    f("innodb-page-lzo", Kind::InnodbPage("lzo")),
    f("innodb-page-lzma", Kind::InnodbPage("lzma")),
    f("innodb-page-bzip2", Kind::InnodbPage("bzip2")),
    f("innodb-page-snappy", Kind::InnodbPage("snappy")),
    f("rocksdb-none", Kind::Rocksdb("kNoCompression")),
    f("rocksdb-snappy", Kind::Rocksdb("kSnappyCompression")),
    f("rocksdb-lz4", Kind::Rocksdb("kLZ4Compression")),
    f("rocksdb-zstd", Kind::Rocksdb("kZSTD")),
    f("myisam", Kind::Myisam),
    f("aria", Kind::Aria),
];
const POSTGRES: [Format; 2] = [
    f("pg-heap-pglz", Kind::Pg("pglz")),
    f("pg-heap-lz4", Kind::Pg("lz4")),
];
const SQLITE: [Format; 1] = [f("sqlite", Kind::Sqlite)];

const fn f(name: &'static str, kind: Kind) -> Format {
    Format { name, kind }
}

/// Every format tried on a DBMS, in the order they run.
pub fn for_dbms(dbms: Dbms) -> &'static [Format] {
    match dbms {
        Dbms::Mysql => &MYSQL,
        Dbms::Postgres => &POSTGRES,
        Dbms::Sqlite => &SQLITE,
    }
}

impl Format {
    /// Why the format is not run unless asked for by name: it broke the server here.
    pub fn hazard(&self) -> Option<&'static str> {
        match self.kind {
            // Measured 2026-11-23 on MariaDB 10.11.19 (Debian) with provider_lzo: during the
            // load of 100,000 rows the server aborted ("malloc(): corrupted top size", signal
            // 6) and its crash recovery then failed on corrupted pages of the table, so the
            // server could not start again. lz4, snappy, lzma and bzip2 ran.
            Kind::InnodbPage("lzo") => Some(
                "InnoDB page compression with lzo crashed MariaDB 10.11.19 here (heap corruption) and left its data unrecoverable",
            ),
            _ => None,
        }
    }

    /// The table holding this format's copy of the rows.
    pub fn table(&self) -> String {
        format!("comp_{}", self.name.replace('-', "_"))
    }

    /// The storage engine as the server names it (MySQL), else the DBMS's storage.
    pub fn engine(&self) -> &'static str {
        match self.kind {
            Kind::Innodb | Kind::InnodbRow(_) | Kind::InnodbPage(_) => "InnoDB",
            Kind::Rocksdb(_) => "ROCKSDB",
            Kind::Myisam => "MyISAM",
            Kind::Aria => "Aria",
            Kind::Pg(_) => "heap",
            Kind::Sqlite => "sqlite-btree",
        }
    }

    /// The RocksDB column family of this format (one per codec, so that each table's SST files
    /// hold only its own rows and carry only its codec).
    pub fn column_family(&self) -> Option<String> {
        match self.kind {
            Kind::Rocksdb(_) => Some(format!("eb_{}", self.table())),
            _ => None,
        }
    }

    /// The CREATE TABLE statement.
    pub fn create_sql(&self) -> String {
        let t = self.table();
        match self.kind {
            Kind::Pg(method) => format!(
                "CREATE TABLE {t} (id BIGINT NOT NULL PRIMARY KEY, proc_name VARCHAR(128) COMPRESSION {method} NOT NULL, \
                 instance_name VARCHAR(64) COMPRESSION {method} NOT NULL, begin_at TIMESTAMP(3) NOT NULL, end_at TIMESTAMP(3) NOT NULL, \
                 duration_ms INTEGER NOT NULL, row_count BIGINT NOT NULL, status VARCHAR(16) COMPRESSION {method} NOT NULL, \
                 params VARCHAR(1024) COMPRESSION {method} NOT NULL)"
            ),
            Kind::Sqlite => format!(
                "CREATE TABLE {t} (id INTEGER NOT NULL PRIMARY KEY, proc_name TEXT NOT NULL, instance_name TEXT NOT NULL, \
                 begin_at TEXT NOT NULL, end_at TEXT NOT NULL, duration_ms INTEGER NOT NULL, row_count INTEGER NOT NULL, \
                 status TEXT NOT NULL, params TEXT NOT NULL)"
            ),
            _ => {
                let pk_comment = self
                    .column_family()
                    .map(|cf| format!(" COMMENT 'cfname={cf}'"))
                    .unwrap_or_default();
                format!(
                    "CREATE TABLE {t} (id BIGINT NOT NULL, proc_name VARCHAR(128) NOT NULL, instance_name VARCHAR(64) NOT NULL, \
                     begin_at DATETIME(3) NOT NULL, end_at DATETIME(3) NOT NULL, duration_ms INT NOT NULL, row_count BIGINT NOT NULL, \
                     status VARCHAR(16) NOT NULL, params VARCHAR(1024) NOT NULL, PRIMARY KEY (id){pk_comment}) {}",
                    self.table_options()
                )
            }
        }
    }

    /// The MySQL table options that select the format.
    pub fn table_options(&self) -> String {
        match self.kind {
            Kind::Innodb => "ENGINE=InnoDB".into(),
            Kind::InnodbRow(k) => format!("ENGINE=InnoDB ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE={k}"),
            Kind::InnodbPage(_) => "ENGINE=InnoDB PAGE_COMPRESSED=1".into(),
            Kind::Rocksdb(_) => "ENGINE=ROCKSDB".into(),
            Kind::Myisam => "ENGINE=MyISAM".into(),
            Kind::Aria => "ENGINE=Aria".into(),
            Kind::Pg(_) | Kind::Sqlite => String::new(),
        }
    }

    /// What selects the format, for the result: table options plus any global setting.
    pub fn describe(&self) -> String {
        match self.kind {
            Kind::InnodbPage(a) => format!("{} with innodb_compression_algorithm={a}", self.table_options()),
            Kind::Rocksdb(c) => format!(
                "ENGINE=ROCKSDB, primary key in column family {} with compression={c}, bottommost_compression={c}",
                self.column_family().unwrap_or_default()
            ),
            Kind::Pg(m) => format!("heap, text columns COMPRESSION {m}"),
            Kind::Sqlite => "plain table (SQLite has no compression)".into(),
            _ => self.table_options(),
        }
    }

    /// Files of a MySQL table in its database folder, by extension.
    pub fn file_extensions(&self) -> &'static [&'static str] {
        match self.kind {
            Kind::Innodb | Kind::InnodbRow(_) | Kind::InnodbPage(_) => &["ibd"],
            Kind::Myisam => &["MYD", "MYI"],
            Kind::Aria => &["MAD", "MAI"],
            _ => &[],
        }
    }
}

/// The MariaDB compression provider plugin an InnoDB page-compression algorithm needs (zlib
/// is built in; the others come as plugins since 10.7, Debian `mariadb-plugin-provider-*`).
pub fn provider_plugin(alg: &str) -> Option<&'static str> {
    match alg {
        "lz4" => Some("provider_lz4"),
        "lzo" => Some("provider_lzo"),
        "lzma" => Some("provider_lzma"),
        "bzip2" => Some("provider_bzip2"),
        "snappy" => Some("provider_snappy"),
        _ => None,
    }
}

/// Load the provider plugin of `alg` when the server has not (INSTALL SONAME; it stays
/// installed). Returns what the result records about it.
async fn ensure_provider(conn: &mut Conn, alg: &str) -> Result<Option<String>, String> {
    let Some(plugin) = provider_plugin(alg) else {
        return Ok(None);
    };
    let status_sql = format!(
        "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = '{plugin}'"
    );
    let status = conn.query_one(&status_sql).await.map_err(|e| e.message)?;
    if status.as_deref() == Some("ACTIVE") {
        return Ok(Some(format!("{plugin} ACTIVE")));
    }
    conn.execute(&format!("INSTALL SONAME '{plugin}'"))
        .await
        .map_err(|e| {
            format!(
                "innodb_compression_algorithm={alg} needs the plugin {plugin}, which the server cannot load ({}); on Debian install mariadb-plugin-provider-{alg}",
                e.message
            )
        })?;
    let status = conn.query_one(&status_sql).await.map_err(|e| e.message)?;
    Ok(Some(format!(
        "{plugin} {} (installed by enginebench)",
        status.unwrap_or_else(|| "not listed".into())
    )))
}

/// Set up what the format needs before its table is created (a global codec and its provider
/// plugin); returns the statement that puts the server back afterwards, if any, and the
/// setting as read back (for the result). An error means the server lacks the format.
pub async fn before_create(
    conn: &mut Conn,
    f: &Format,
) -> Result<(Option<String>, Option<String>), String> {
    match f.kind {
        Kind::InnodbPage(alg) => {
            let old = conn
                .query_one("SELECT @@innodb_compression_algorithm")
                .await
                .map_err(|e| e.message)?
                .unwrap_or_else(|| "zlib".into());
            let plugin = ensure_provider(conn, alg).await?;
            conn.execute(&format!("SET GLOBAL innodb_compression_algorithm='{alg}'"))
                .await
                .map_err(|e| {
                    format!("innodb_compression_algorithm={alg} refused: {}", e.message)
                })?;
            let now = conn
                .query_one("SELECT @@innodb_compression_algorithm")
                .await
                .map_err(|e| e.message)?
                .unwrap_or_default();
            let setting = match plugin {
                Some(p) => format!("innodb_compression_algorithm={now}; {p}"),
                None => format!("innodb_compression_algorithm={now}"),
            };
            Ok((
                Some(format!("SET GLOBAL innodb_compression_algorithm='{old}'")),
                Some(setting),
            ))
        }
        Kind::Rocksdb(codec) => {
            let supported = conn
                .query_one("SELECT @@rocksdb_supported_compression_types")
                .await
                .map_err(|_| "the server has no RocksDB engine".to_string())?
                .unwrap_or_default()
                .to_ascii_lowercase();
            let needed = match codec {
                "kNoCompression" => None,
                "kSnappyCompression" => Some("snappy"),
                "kLZ4Compression" => Some("lz4"),
                "kZSTD" => Some("zstd"),
                other => Some(other),
            };
            match needed {
                Some(n) if !supported.split(',').any(|s| s.starts_with(n)) => Err(format!(
                    "RocksDB here supports {supported}, not {n} (rocksdb_supported_compression_types)"
                )),
                _ => Ok((None, None)),
            }
        }
        _ => Ok((None, None)),
    }
}

/// After CREATE TABLE: give the RocksDB column family its codec (at run time, with
/// rocksdb_update_cf_options; the cf was created with the defaults by CREATE TABLE).
pub async fn after_create(conn: &mut Conn, f: &Format) -> Result<(), String> {
    if let (Kind::Rocksdb(codec), Some(cf)) = (f.kind, f.column_family()) {
        conn.execute(&format!(
            "SET GLOBAL rocksdb_update_cf_options='{cf}={{compression={codec};bottommost_compression={codec}}}'"
        ))
        .await
        .map_err(|e| format!("cannot set the codec of column family {cf}: {}", e.message))?;
        let got = conn
            .query_one(&format!(
                "SELECT VALUE FROM information_schema.ROCKSDB_CF_OPTIONS WHERE CF_NAME = '{cf}' AND OPTION_TYPE = 'COMPRESSION_TYPE'"
            ))
            .await
            .map_err(|e| e.message)?
            .unwrap_or_default();
        // kZSTD reads back as kZSTD or kZSTDNotFinalCompression depending on the build.
        if !got.starts_with(codec) {
            return Err(format!(
                "column family {cf} reports compression {got}, not {codec}"
            ));
        }
    }
    Ok(())
}

/// Check that the server made the table as asked (no engine substitution, no silently
/// ignored option); returns its CREATE_OPTIONS as the server reports them.
pub async fn verify(conn: &mut Conn, f: &Format) -> Result<String, String> {
    if conn.dbms() != Dbms::Mysql {
        return Ok(String::new());
    }
    let rows = conn
        .query(&format!(
            "SELECT ENGINE, ROW_FORMAT, CREATE_OPTIONS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{}'",
            f.table()
        ))
        .await
        .map_err(|e| e.message)?;
    let r = rows.into_iter().next().ok_or("the table was not created")?;
    let get = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
    let (engine, row_format, options) = (get(0), get(1), get(2));
    if !engine.eq_ignore_ascii_case(f.engine()) {
        return Err(format!(
            "the table was created with engine {engine}, not {}",
            f.engine()
        ));
    }
    let lower = options.to_ascii_lowercase();
    let ok = match f.kind {
        Kind::InnodbRow(k) => {
            row_format.eq_ignore_ascii_case("compressed")
                && lower.contains(&format!("key_block_size={k}"))
        }
        Kind::InnodbPage(_) => lower.contains("page_compressed"),
        _ => true,
    };
    if !ok {
        return Err(format!(
            "the server did not keep the format: ROW_FORMAT={row_format}, CREATE_OPTIONS='{options}'"
        ));
    }
    Ok(format!("ROW_FORMAT={row_format} {options}")
        .trim()
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_tables_valid() {
        for d in [Dbms::Mysql, Dbms::Postgres, Dbms::Sqlite] {
            let fs = for_dbms(d);
            for (i, a) in fs.iter().enumerate() {
                assert!(fs[i + 1..].iter().all(|b| b.name != a.name));
                assert!(a
                    .table()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_'));
            }
        }
        let rz = for_dbms(Dbms::Mysql)
            .iter()
            .find(|f| f.name == "rocksdb-zstd")
            .unwrap();
        assert!(rz
            .create_sql()
            .contains("PRIMARY KEY (id) COMMENT 'cfname=eb_comp_rocksdb_zstd'"));
        let k8 = for_dbms(Dbms::Mysql)[1];
        assert!(k8
            .create_sql()
            .ends_with("ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8"));
    }
}
