//! The workloads: one folder per benchmark, each behind the contract (`crate::contract`) and
//! named by the registry (`crate::registry`). `textgen` is a text generator several share.
//!
//! Every folder here with a `mod.rs` is a module of this one (`round_trip`, `tpcc`, ...),
//! declared by build.rs: adding a workload edits no list here.

include!(concat!(env!("OUT_DIR"), "/workloads.rs"));

pub mod textgen;
