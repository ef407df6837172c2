//! A target URL's query string: the connection's options, each checked as it is read.

use std::path::PathBuf;

use super::*;

/// The options of a target URL's query string (`?socket=`, `?driver=`, `?ssl-mode=`, ...).
pub(super) struct QueryOptions {
    pub(super) socket: Option<String>,
    pub(super) mysql_driver: MysqlDriver,
    pub(super) pg_driver: PgDriver,
    pub(super) ssl_mode: SslMode,
    pub(super) ssl_ca: Option<PathBuf>,
    pub(super) pipeline_begin: bool,
    pub(super) pipeline_statements: bool,
    pub(super) spider: Vec<Endpoint>,
    pub(super) read: ReadRoute,
}

impl QueryOptions {
    pub(super) fn parse(
        u: &url::Url,
        shown: &str,
        dbms: Dbms,
        default_port: u16,
        socket_key: &str,
    ) -> Result<Self, String> {
        let mut socket = None;
        let mut mysql_driver = MysqlDriver::default();
        let mut pg_driver = PgDriver::default();
        let mut ssl_mode = SslMode::Disable;
        let mut ssl_ca = None;
        let mut pipeline_begin = true;
        let mut pipeline_statements = true;
        let mut spider = Vec::new();
        let mut read = ReadRoute::Spread;
        for (k, v) in u.query_pairs() {
            if k == "ssl-mode" || k == "sslmode" {
                ssl_mode = SslMode::parse(&v).ok_or_else(|| {
                    format!("invalid target '{shown}': unknown ssl-mode '{v}' (use disable, prefer, require, verify-ca or verify-full)")
                })?;
            } else if k == "ssl-ca" || k == "sslrootcert" {
                if v.is_empty() {
                    return Err(format!(
                        "invalid target '{shown}': ssl-ca needs a file path"
                    ));
                }
                ssl_ca = Some(PathBuf::from(v.as_ref()));
            } else if k == socket_key {
                socket = Some(v.into_owned());
            } else if k == "begin" {
                pipeline_begin = match v.as_ref() {
                    "pipelined" => true,
                    "separate" => false,
                    other => {
                        return Err(format!(
                            "invalid target '{shown}': unknown begin '{other}' (use pipelined or separate)"
                        ))
                    }
                };
            } else if k == "pipeline" {
                pipeline_statements = match v.as_ref() {
                    "on" => true,
                    "off" => false,
                    other => {
                        return Err(format!(
                            "invalid target '{shown}': unknown pipeline '{other}' (use on or off)"
                        ))
                    }
                };
            } else if k == "spider" && dbms == Dbms::Mysql {
                spider = parse_endpoints(&v, default_port).map_err(|e| {
                    format!("invalid target '{shown}': spider: {e} (give the backends as host:port or /socket/path, comma separated)")
                })?;
            } else if k == "spider" {
                return Err(format!(
                    "invalid target '{shown}': ?spider= names the backends of a MariaDB Spider head: it needs a mysql:// target"
                ));
            } else if k == "read" && dbms == Dbms::Postgres {
                read = match v.as_ref() {
                    "replicas" => ReadRoute::Replicas,
                    "all" => ReadRoute::Spread,
                    other => {
                        return Err(format!(
                            "invalid target '{shown}': unknown read '{other}' (use replicas or all)"
                        ))
                    }
                };
            } else if k == "driver" && dbms == Dbms::Mysql {
                mysql_driver = match v.as_ref() {
                    "wire" => MysqlDriver::Wire,
                    "mysql_async" => MysqlDriver::MysqlAsync,
                    other => {
                        return Err(format!(
                            "invalid target '{shown}': unknown driver '{other}' (use wire or mysql_async)"
                        ))
                    }
                };
            } else if k == "driver" && dbms == Dbms::Postgres {
                pg_driver = match v.as_ref() {
                    "wire" => PgDriver::Wire,
                    "tokio_postgres" | "tokio-postgres" => PgDriver::TokioPostgres,
                    other => {
                        return Err(format!(
                            "invalid target '{shown}': unknown driver '{other}' (use wire or tokio_postgres)"
                        ))
                    }
                };
            } else {
                let also = if dbms == Dbms::Mysql {
                    ", driver, begin, pipeline, spider"
                } else if dbms == Dbms::Postgres {
                    ", driver, begin, pipeline, read"
                } else {
                    ", driver, begin, pipeline"
                };
                let hint = if is_secret_key(&k) {
                    ": give passwords through MYSQL_PWD or PGPASSWORD"
                } else {
                    ""
                };
                return Err(format!(
                    "invalid target '{shown}': unknown option '{k}' (supported: {socket_key}{also}, ssl-mode, ssl-ca){hint}"
                ));
            }
        }
        Ok(Self {
            socket,
            mysql_driver,
            pg_driver,
            ssl_mode,
            ssl_ca,
            pipeline_begin,
            pipeline_statements,
            spider,
            read,
        })
    }
}
