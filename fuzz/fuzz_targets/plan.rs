//! cargo-fuzz target: enginebench::fuzz::plan (invariants are documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| enginebench::fuzz::plan(data));
