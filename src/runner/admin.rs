//! The admin connection during the measured part of a run (server counters between runs,
//! engine status and sizes after a point). Under `--query-timeout` a server that stops
//! answering cannot hang these reads; after a timeout or a lost connection the reads give
//! nothing until the connection is re-opened (`--reconnect`) — never a stale answer.

use std::collections::BTreeMap;
use std::future::Future;

use tokio::runtime::Runtime;

use crate::db::{Conn, TargetSpec};
use crate::server::capture::{self, DiskUsage, TableSize};

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
