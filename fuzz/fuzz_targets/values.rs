//! cargo-fuzz target: enginebench::fuzz::values (invariants are documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| enginebench::fuzz::values(data));
