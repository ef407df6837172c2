//! What the result says of the target: its nodes as read at the start of a run, their
//! replication over it, the sizes of its tables and of its data folder.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One node of the target as read at the start of the run: its version and how its settings
/// differ from node 0's (`TargetInfo::settings`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NodeInfo {
    /// `host:port` as in the runs' `by_node` (never a password).
    pub node: String,
    #[serde(default)]
    pub server_version: String,
    /// Settings whose value on this node differs from node 0's (a setting this node lacks: "").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings_differ: BTreeMap<String, String>,
    /// Settings not at their default on this node but at it on node 0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings_non_default: Vec<String>,
    /// Why the node could not be read ("class: message", no password); the rest is then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A node of a managed cluster (`--server mariadb-galera:N`, ...) whose process had ended
    /// on its own by the end of the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exited: bool,
}

impl NodeInfo {
    /// Mark the nodes of a managed cluster found dead (1-based, as `Cluster::dead_nodes`)
    /// and say so in a note each.
    pub fn mark_exited(nodes: &mut [NodeInfo], dead: &[usize]) -> Vec<String> {
        dead.iter()
            .filter_map(|&i| {
                let n = nodes.get_mut(i.checked_sub(1)?)?;
                n.exited = true;
                Some(format!(
                    "Node {} ({}) of the managed cluster had ended on its own by the end of the run: its figures stop where it did; its folder is kept for the log.",
                    i - 1,
                    n.node
                ))
            })
            .collect()
    }
}

/// One node's replication state at one moment of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ReplicationSample {
    /// Seconds from the start of the run.
    pub t_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recv_queue: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_queue: Option<f64>,
}

impl ReplicationSample {
    pub fn is_empty(&self) -> bool {
        self.lag_bytes.is_none()
            && self.lag_s.is_none()
            && self.recv_queue.is_none()
            && self.send_queue.is_none()
    }
}

/// Size of a table as the server reports it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct TableSize {
    pub table: String,
    pub rows_estimate: u64,
    pub data_bytes: u64,
    pub index_bytes: u64,
}

/// Space the server's data folder takes on disk after the engine-specific forced flush.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct DiskUsage {
    /// The server's data directory (read from the server).
    pub path: String,
    /// Allocated blocks (st_blocks × 512) of every file under it: page-compressed InnoDB files
    /// are sparse, so their length would overstate them.
    pub allocated_bytes: u64,
    /// Whether the forced flush finished (InnoDB dirty pages reached 0 within 30 s; RocksDB
    /// memtables flushed; PostgreSQL CHECKPOINT done).
    pub flushed: bool,
    pub flush_s: f64,
}
