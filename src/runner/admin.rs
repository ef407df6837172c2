//! The admin connection during the measured part of a run (server counters between runs,
//! engine status and sizes after a point). Under `--query-timeout` a server that stops
//! answering cannot hang these reads; after a timeout or a lost connection the reads give
//! nothing until the connection is re-opened (`--reconnect`) — never a stale answer.

use std::collections::BTreeMap;
use std::future::Future;

use tokio::runtime::Runtime;

use crate::db::{Conn, TargetSpec};
use crate::model::{DiskUsage, NodeInfo, ReplicationSample, TableSize};
use crate::server::capture;

use super::Faults;

pub struct Admin {
    conn: Option<Conn>,
    spec: TargetSpec,
    faults: Faults,
    /// Connections to the other nodes of a multi-host target (node 1, 2, ...), or to the
    /// backends of a Spider head, opened when first needed and dropped after a failed read.
    nodes: Vec<Option<Conn>>,
}

impl Admin {
    pub fn new(conn: Conn, spec: TargetSpec, faults: Faults) -> Self {
        let others = if spec.is_spider() {
            spec.spider.len()
        } else {
            spec.node_count() - 1
        };
        Admin {
            conn: Some(conn),
            spec,
            faults,
            nodes: (0..others).map(|_| None).collect(),
        }
    }

    /// Status counters of the other nodes of a multi-host target (node 1, 2, ... in the URL's
    /// order; node 0 is `counters`), or of a Spider head's backends (in `?spider=` order): an
    /// empty map for a node that could not be read, none for a one-node target.
    pub fn other_node_counters(&mut self, rt: &Runtime) -> Vec<BTreeMap<String, f64>> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let wait = self
            .faults
            .query_timeout
            .unwrap_or(std::time::Duration::from_secs(10));
        for (i, slot) in self.nodes.iter_mut().enumerate() {
            let spec = if self.spec.is_spider() {
                self.spec.spider_backend(i)
            } else {
                self.spec.node(i + 1)
            };
            let read = rt.block_on(async {
                tokio::time::timeout(wait, async {
                    if slot.is_none() {
                        *slot = Conn::connect(&spec).await.ok();
                    }
                    match slot.as_mut() {
                        Some(c) => capture::counters(c).await,
                        None => BTreeMap::new(),
                    }
                })
                .await
            });
            let counters = read.unwrap_or_default();
            if counters.is_empty() {
                *slot = None;
            }
            out.push(counters);
        }
        out
    }

    /// Every node's replication state now (node 0 first; an empty sample for a node that
    /// has none or could not be read): a PostgreSQL replica's lag behind node 0 (the
    /// primary), a Galera node's queue lengths. Bounded by --query-timeout (10 s without).
    pub fn replication(&mut self, rt: &Runtime) -> Vec<ReplicationSample> {
        let dbms = self.spec.dbms;
        let primary_lsn = match dbms {
            crate::db::Dbms::Postgres => self
                .read(rt, |c| {
                    Box::pin(async move {
                        // Fails on a server in recovery: then node 0 is no primary.
                        c.query_one("SELECT pg_current_wal_lsn()::text")
                            .await
                            .ok()
                            .flatten()
                    })
                })
                .flatten()
                .and_then(|l| parse_lsn(&l)),
            _ => None,
        };
        let node0 = match dbms {
            crate::db::Dbms::Mysql => self
                .read(rt, |c| Box::pin(galera_queues(c)))
                .unwrap_or_default(),
            _ => ReplicationSample::default(),
        };
        let wait = self
            .faults
            .query_timeout
            .unwrap_or(std::time::Duration::from_secs(10));
        let mut out = vec![node0];
        for (i, slot) in self.nodes.iter_mut().enumerate() {
            let spec = self.spec.node(i + 1);
            let read = rt.block_on(async {
                tokio::time::timeout(wait, async {
                    if slot.is_none() {
                        *slot = Conn::connect(&spec).await.ok();
                    }
                    let c = slot.as_mut()?;
                    Some(match dbms {
                        crate::db::Dbms::Postgres => replica_lag(c, primary_lsn).await,
                        _ => galera_queues(c).await,
                    })
                })
                .await
            });
            match read {
                Ok(Some(s)) => out.push(s),
                _ => {
                    *slot = None;
                    out.push(ReplicationSample::default());
                }
            }
        }
        out
    }

    /// Waits until every PostgreSQL replica of the target has replayed all that the primary
    /// had written (tables just loaded on the primary are otherwise missing on the replicas
    /// the reads go to), for at most `limit`, and says on stderr when it waits. Returns at once
    /// for other targets and when a replica's position cannot be read.
    pub fn wait_replicas_caught_up(&mut self, rt: &Runtime, limit: std::time::Duration) {
        if self.spec.dbms != crate::db::Dbms::Postgres || self.nodes.is_empty() {
            return;
        }
        let start = std::time::Instant::now();
        let mut waited = false;
        loop {
            let samples = self.replication(rt);
            let behind: Option<u64> = samples[1..].iter().map(|s| s.lag_bytes).sum();
            match behind {
                Some(b) if b > 0 && start.elapsed() < limit => {
                    if !waited {
                        eprintln!(
                            "waiting for the replicas to replay the primary's last {b} bytes"
                        );
                        waited = true;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Some(b) if b > 0 => {
                    eprintln!(
                        "warning: the replicas are still {b} bytes behind the primary after {} s; the run starts anyway",
                        limit.as_secs()
                    );
                    return;
                }
                _ => {
                    if waited {
                        eprintln!(
                            "the replicas caught up in {:.1} s",
                            start.elapsed().as_secs_f64()
                        );
                    }
                    return;
                }
            }
        }
    }

    /// Run one read on the connection; `None` when there is no usable connection or the read
    /// timed out (the connection is then dropped: its protocol state is unknown).
    fn read<T>(
        &mut self,
        rt: &Runtime,
        f: impl for<'c> FnOnce(&'c mut Conn) -> std::pin::Pin<Box<dyn Future<Output = T> + 'c>>,
    ) -> Option<T> {
        if self.conn.is_none() && self.faults.reconnect {
            let wait = self
                .faults
                .query_timeout
                .unwrap_or(std::time::Duration::from_secs(10));
            let spec = &self.spec;
            // The timer needs the runtime: the timeout is made inside block_on.
            self.conn = rt
                .block_on(async { tokio::time::timeout(wait, Conn::connect(spec)).await })
                .ok()
                .and_then(|r| r.ok());
        }
        let conn = self.conn.as_mut()?;
        let out = match self.faults.query_timeout {
            None => Some(rt.block_on(f(conn))),
            Some(t) => rt
                .block_on(async { tokio::time::timeout(t, f(conn)).await })
                .ok(),
        };
        if out.is_none() {
            self.conn = None;
        }
        out
    }

    /// End every connection with its goodbye (a mysql_async one that is only dropped sends
    /// none, and the server counts it in `Aborted_clients`).
    pub fn close(&mut self, rt: &Runtime) {
        let conns: Vec<Conn> = self
            .conn
            .take()
            .into_iter()
            .chain(self.nodes.drain(..).flatten())
            .collect();
        rt.block_on(async {
            for c in conns {
                let _ = c.close().await;
            }
        });
    }

    /// The connection itself, for workloads that drive their own loop; `None` once
    /// it was lost.
    pub fn conn_mut(&mut self) -> Option<&mut Conn> {
        self.conn.as_mut()
    }

    pub fn counters(&mut self, rt: &Runtime) -> BTreeMap<String, f64> {
        let out = self
            .read(rt, |c| Box::pin(capture::counters(c)))
            .unwrap_or_default();
        if out.is_empty() && self.spec.dbms != crate::db::Dbms::Sqlite {
            // The server always has counters: an empty answer means the connection failed.
            self.conn = None;
        }
        out
    }

    pub fn engine_status(&mut self, rt: &Runtime, engine: &str) -> Option<String> {
        let engine = engine.to_string();
        self.read(rt, move |c| {
            Box::pin(async move { capture::engine_status(c, &engine).await })
        })
        .flatten()
    }

    pub fn table_sizes(&mut self, rt: &Runtime) -> Vec<TableSize> {
        self.read(rt, |c| Box::pin(capture::table_sizes(c)))
            .unwrap_or_default()
    }

    pub fn disk_usage(&mut self, rt: &Runtime) -> Option<DiskUsage> {
        self.read(rt, |c| Box::pin(capture::disk_usage(c)))
            .flatten()
    }
}

/// Every node of a multi-host target (node 0 first, in the URL's order) or a Spider head then
/// its backends, read once at the start: each node's version and how its settings differ from
/// node 0's (`version0`, `node0`: read by the caller over the admin connection). The nodes are
/// read together, each bounded by --query-timeout (10 s without) like the other admin reads;
/// a node that cannot be read gets its error instead of ending the run. Empty for one node.
pub fn node_infos(
    rt: &Runtime,
    spec: &TargetSpec,
    faults: &Faults,
    version0: &str,
    node0: &capture::Settings,
) -> Vec<NodeInfo> {
    // The same names as the runs' by_node (harness::sweep).
    let others: Vec<(String, TargetSpec)> = if spec.is_spider() {
        (spec.spider.iter().enumerate())
            .map(|(k, b)| (format!("spider backend {b}"), spec.spider_backend(k)))
            .collect()
    } else {
        (1..spec.node_count())
            .map(|i| (spec.node_label(i), spec.node(i)))
            .collect()
    };
    if others.is_empty() {
        return Vec::new();
    }
    let wait = faults
        .query_timeout
        .unwrap_or(std::time::Duration::from_secs(10));
    let reads = rt.block_on(futures_util::future::join_all(others.iter().map(
        |(_, s)| async move {
            tokio::time::timeout(wait, async {
                let mut c = Conn::connect(s).await?;
                let version = c.server_version().await?;
                Ok::<_, crate::db::DbError>((version, capture::settings(&mut c).await))
            })
            .await
        },
    )));
    let mut out = vec![NodeInfo {
        node: spec.node_label(0),
        server_version: version0.to_string(),
        ..NodeInfo::default()
    }];
    for ((node, s), read) in others.into_iter().zip(reads) {
        out.push(match read {
            Ok(Ok((server_version, settings))) => {
                let (settings_differ, settings_non_default) = capture::node_diff(node0, &settings);
                NodeInfo {
                    node,
                    server_version,
                    settings_differ,
                    settings_non_default,
                    ..NodeInfo::default()
                }
            }
            Ok(Err(e)) => NodeInfo {
                node,
                error: Some(format!("{}: {}", e.class.name(), s.scrub(&e.message))),
                ..NodeInfo::default()
            },
            Err(_) => NodeInfo {
                node,
                error: Some(format!(
                    "query_timeout: no answer within {} s",
                    wait.as_secs_f64()
                )),
                ..NodeInfo::default()
            },
        });
    }
    out
}

/// A PostgreSQL LSN (`16/B374D848`) as a byte position.
fn parse_lsn(s: &str) -> Option<u64> {
    let (hi, lo) = s.trim().split_once('/')?;
    Some((u64::from_str_radix(hi, 16).ok()? << 32) | u64::from_str_radix(lo, 16).ok()?)
}

/// A PostgreSQL replica's lag: WAL bytes behind `primary_lsn` (read just before) and seconds
/// since its last replayed transaction committed on the primary — 0 when it has replayed
/// all it received (the usual form: a replica of an idle primary is not behind). Nothing on
/// a server that is not in recovery.
async fn replica_lag(c: &mut Conn, primary_lsn: Option<u64>) -> ReplicationSample {
    let row = c
        .query(
            "SELECT pg_last_wal_replay_lsn()::text, \
             CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0 \
             ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) END::float8::text \
             WHERE pg_is_in_recovery()",
        )
        .await
        .ok()
        .and_then(|r| r.into_iter().next());
    let Some(row) = row else {
        return ReplicationSample::default();
    };
    let replay = row.first().cloned().flatten().and_then(|l| parse_lsn(&l));
    ReplicationSample {
        lag_bytes: match (primary_lsn, replay) {
            // Read one after the other: the replica may already be past the primary's
            // earlier position.
            (Some(p), Some(r)) => Some(p.saturating_sub(r)),
            _ => None,
        },
        lag_s: row
            .get(1)
            .cloned()
            .flatten()
            .and_then(|v| v.parse::<f64>().ok())
            .map(|v| v.max(0.0)),
        ..ReplicationSample::default()
    }
}

/// A Galera node's queue lengths now; nothing on a server without Galera.
async fn galera_queues(c: &mut Conn) -> ReplicationSample {
    let rows = c
        .query(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_recv_queue', 'wsrep_local_send_queue')",
        )
        .await
        .unwrap_or_default();
    let mut s = ReplicationSample::default();
    for r in rows {
        let (Some(Some(k)), Some(Some(v))) = (r.first(), r.get(1)) else {
            continue;
        };
        let v = v.parse::<f64>().ok();
        match k.to_ascii_lowercase().as_str() {
            "wsrep_local_recv_queue" => s.recv_queue = v,
            "wsrep_local_send_queue" => s.send_queue = v,
            _ => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn lsn() {
        assert_eq!(super::parse_lsn("0/3000148"), Some(0x3000148));
        assert_eq!(
            super::parse_lsn("16/B374D848"),
            Some((0x16 << 32) | 0xB374D848)
        );
        assert_eq!(super::parse_lsn("x"), None);
    }
}
