//! sysbench's OLTP workloads under their own names (`oltp_read_write`, `oltp_point_select`,
//! ...): their entry in the registry. The tables, options, load and transactions are
//! `workload::sbtest`'s, which schema-change shares; docs/oltp.md.

mod entry;
pub use entry::{SysbenchArgs, ENTRY};
