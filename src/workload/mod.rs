//! The workloads: one folder per benchmark, each behind the contract (`crate::contract`) and
//! named by the registry (`crate::registry`). `textgen` is a text generator several share.

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
