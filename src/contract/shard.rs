//! Sharded targets: a MariaDB Spider head and its backends (`?spider=h1:p1,h2:p2` in the
//! target URL; docs/clusters.md).
//!
//! A workload that can be sharded declares where each of its tables lives
//! (`Workload::shard_keys`): split over the backends by an integer column (partition *k* of
//! *N* on backend *k*: key mod N = k, MariaDB's rule for `HASH`), or kept whole on the head.
//! Here: those placements, the refusal of a workload that declares none, the result's note
//! and the head's names for its backends. Creating and loading the tables where they live is
//! `crate::workload::place`'s, above the contract (it drives the loader and a fleet's steps).
//!
//! The run then goes through the head only.

use crate::db::TargetSpec;
use crate::error::{Error, Result};

use super::Workload;

/// Where one table of a workload lives on a sharded target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Split over the backends by this integer column: backend *k* of *N* holds the rows whose
    /// key mod *N* is *k*.
    Key(&'static str),
    /// Kept whole on the head as an ordinary table (a small read-only table that no query
    /// joins with a sharded one: TPC-C's item).
    Head,
}

/// Every table a workload creates, with its placement.
pub type ShardKeys = Vec<(String, Placement)>;

/// Exit 2 when the target is a Spider head and the workload declares no sharding key.
pub fn refuse_unsharded(w: &dyn Workload, target: &TargetSpec) -> Result<()> {
    if target.is_spider() && w.shard_keys().is_none() {
        return Err(Error::usage(format!(
            "{} declares no sharding key: it cannot run on a Spider target (?spider= in --target; docs/clusters.md lists the workloads that can)",
            w.name()
        )));
    }
    Ok(())
}

/// The result note of a Spider target: the head, the backends and each table's placement.
pub fn note(target: &TargetSpec, keys: &ShardKeys) -> Option<String> {
    if !target.is_spider() {
        return None;
    }
    let backends: Vec<String> = target.spider.iter().map(|b| b.to_string()).collect();
    let tables: Vec<String> = keys
        .iter()
        .map(|(t, p)| match p {
            Placement::Key(c) => format!("{t} by {c}"),
            Placement::Head => format!("{t} on the head"),
        })
        .collect();
    Some(format!(
        "Spider target: every connection goes to the head {}; {} backends ({}) hold the sharded tables (partition k = key mod {}, loaded into the backends directly): {}.",
        target.node_label(0),
        backends.len(),
        backends.join(", "),
        backends.len(),
        tables.join(", ")
    ))
}

/// The head's name for backend `k` of database `db` (`CREATE SERVER`): per database, so that
/// two databases on one head can point at different backends.
pub fn server_name(db: &str, k: usize) -> String {
    let clean: String = db
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(40)
        .collect();
    format!("eb_{clean}_{k}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A Spider head with two backends (a TCP one and a socket one), for the tests of shard
    /// keys here and of placing tables (`workload::place`).
    pub(crate) fn spider_target() -> TargetSpec {
        TargetSpec::parse(
            "mysql://root:pw@127.0.0.1:3300/eb?spider=127.0.0.1:3301,/tmp/b1.sock",
            |_| None,
        )
        .unwrap()
    }

    #[test]
    fn notes_name_head_and_backends() {
        let t = spider_target();
        let keys = vec![
            ("stock".to_string(), Placement::Key("s_w_id")),
            ("item".to_string(), Placement::Head),
        ];
        let n = note(&t, &keys).unwrap();
        assert!(
            n.contains("127.0.0.1:3300") && n.contains("/tmp/b1.sock"),
            "{n}"
        );
        assert!(
            n.contains("stock by s_w_id") && n.contains("item on the head"),
            "{n}"
        );
        assert!(!n.contains("pw"));
    }
}
