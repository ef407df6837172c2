//! The workloads: one folder per benchmark, each behind the contract (`crate::contract`) and
//! named by the registry (`crate::registry`). What several workloads share lives beside them
//! and is no workload (no `entry.rs`): `textgen`, a text generator; `sbtest`, sysbench's
//! tables, load and transactions (oltp and schema-change); and `place`, creating and loading
//! tables on one server or a Spider head and its backends (every workload that declares shard
//! keys). No workload imports another.
//!
//! Every folder here has its `pub mod` line below, and every workload folder (one with an
//! `entry.rs`) its line in `registry::builtins()`; a unit test there
//! (`every_folder_is_declared_and_registered`) fails when a folder misses either.

pub mod compression;
pub mod custom;
pub mod iibench;
pub mod linkbench;
pub mod micro_read;
pub mod oltp;
pub mod place;
pub mod round_trip;
pub mod sbtest;
pub mod schema_change;
pub mod sqlbench;
pub mod textgen;
pub mod tpcc;
