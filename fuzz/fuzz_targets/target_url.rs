//! cargo-fuzz target: enginebench::fuzz::target_url (invariants are documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| enginebench::fuzz::target_url(data));
