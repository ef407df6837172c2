//! The workloads: one folder per benchmark, each behind the contract (`crate::contract`) and
//! named by the registry (`crate::registry`). `textgen` is a text generator several share.
//!
//! Every folder here with a `mod.rs` has its `pub mod` line below and its line in
//! `registry::builtins()`; a unit test there (`every_folder_is_declared_and_registered`)
//! fails when a folder misses either.

pub mod compression;
pub mod custom;
pub mod iibench;
pub mod linkbench;
pub mod micro_read;
pub mod oltp;
pub mod round_trip;
pub mod schema_change;
pub mod sqlbench;
pub mod textgen;
pub mod tpcc;
