//! cargo-fuzz target: enginebench::fuzz::workload_file (invariants are documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| enginebench::fuzz::workload_file(data));
