//! Fuzz entry points for the parsers of what users type: target URLs, durations, counts,
//! rates, thread lists and plan files. Each takes arbitrary bytes, runs the parser, and panics
//! only when an invariant breaks (a panic inside the parser is a finding too): errors are one
//! line, a password never shows in an error or in the stored form of a URL, accepted values
//! are in range.
//!
//! Driven by cargo-fuzz (`fuzz/`, its own workspace) and by the seeded property loop
//! `cargo run --release --example fuzz-parsers -- --minutes 5` (docs/fuzzing.md).

use crate::db::TargetSpec;
use crate::units;

/// The password the URL fuzzing plants in the user part; generators never put it elsewhere.
pub const URL_SECRET: &str = "Zq9Secret";

/// What the user sees of an error is `error::one_line` of it (main.rs prints nothing else):
/// one line, no control characters, not empty.
fn one_line(what: &str, input: &str, e: &str) {
    let shown = crate::error::one_line(e);
    assert!(
        !shown.chars().any(char::is_control),
        "{what}({input:?}): error shows control characters: {shown:?}"
    );
    assert!(!shown.is_empty(), "{what}({input:?}): empty error");
}

/// Target URLs. When the input holds [`URL_SECRET`] right after `://user:` it is a password:
/// then neither the error nor the stored (display) form may hold it.
pub fn target_url(data: &[u8]) {
    let s = String::from_utf8_lossy(data);
    // Exactly once: a mutation that copies it elsewhere (a socket path) makes it not a secret.
    // sqlite:// URLs hold a file path, never credentials: nothing is planted there.
    let planted = s.matches(URL_SECRET).count() == 1
        && !s.starts_with("sqlite:")
        && s.find("://")
            .map(|i| &s[i + 3..])
            .and_then(|rest| rest.split_once(':'))
            .is_some_and(|(user, pw)| {
                // Without an '@' after it, `user:xyz` is host:port, not a password.
                !user.contains(['@', '/', '?', '#'])
                    && pw.starts_with(URL_SECRET)
                    && pw.contains('@')
            });
    match TargetSpec::parse(&s, |_| Some("envpw".to_string())) {
        Ok(t) => {
            if planted {
                assert!(
                    !t.display.contains(URL_SECRET),
                    "url({s:?}): display holds the password: {}",
                    t.display
                );
                assert!(
                    !format!("{t:?}").contains(URL_SECRET),
                    "url({s:?}): Debug holds the password"
                );
            }
        }
        Err(e) => {
            one_line("url", &s, &e);
            if planted {
                assert!(
                    !e.contains(URL_SECRET),
                    "url({s:?}): error holds the password: {e}"
                );
            }
        }
    }
}

/// Durations, counts, rates and thread lists (the input is tried as each).
pub fn values(data: &[u8]) {
    let s = String::from_utf8_lossy(data);
    match units::duration(&s) {
        Ok(d) => assert!(d.as_secs_f64() <= 1e9, "duration({s:?}) = {d:?}"),
        Err(e) => one_line("duration", &s, &e),
    }
    if let Err(e) = units::count(&s) {
        one_line("count", &s, &e);
    }
    match units::rate(&s) {
        Ok(r) => assert!(r.is_finite() && r > 0.0 && r <= 1e9, "rate({s:?}) = {r}"),
        Err(e) => one_line("rate", &s, &e),
    }
    match units::thread_list(&s) {
        Ok(v) => assert!(
            !v.is_empty() && v.iter().all(|&n| (1..=100_000).contains(&n)),
            "threads({s:?}) = {v:?}"
        ),
        Err(e) => one_line("threads", &s, &e),
    }
}

/// Plan files (TOML), at every `--scale`; an accepted plan must yield its cells.
pub fn plan(data: &[u8]) {
    let s = String::from_utf8_lossy(data);
    for scale in crate::suite::plan::Scale::ALL {
        match crate::suite::Plan::from_text(&s, "fuzz.toml", scale) {
            Ok(p) => {
                let cells = p.cells();
                assert!(!cells.is_empty(), "plan accepted with no cells: {s:?}");
            }
            Err(e) => one_line("plan", &s, &e.message),
        }
    }
}

/// Workload files (`--workload-file`, TOML with SQL and generators): errors are one line; an
/// accepted file has at least one transaction, each with at least one statement.
pub fn workload_file(data: &[u8]) {
    let s = String::from_utf8_lossy(data);
    match crate::workload::custom::file::parse("fuzz.toml", &s, &[], 1) {
        Ok(spec) => assert!(
            !spec.txns.is_empty() && spec.txns.iter().all(|t| !t.statements.is_empty()),
            "workload file accepted without statements: {s:?}"
        ),
        Err(e) => one_line("workload_file", &s, &e),
    }
}

/// A fuzz target: arbitrary bytes in, a panic when an invariant breaks.
pub type Target = fn(&[u8]);

/// Every fuzz target by name (the property loop and the regression tests use this list).
pub const TARGETS: &[(&str, Target)] = &[
    ("target_url", target_url),
    ("values", values),
    ("plan", plan),
    ("workload_file", workload_file),
];

#[cfg(test)]
mod tests {
    /// Replay the checked-in corpus (seeds and every finding, fuzz/corpus/<target>/) through
    /// each target: the regression tests of the fuzzing (docs/fuzzing.md).
    #[test]
    fn corpus_replays_clean() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
        let mut n = 0;
        for (name, f) in super::TARGETS {
            for e in std::fs::read_dir(root.join(name)).unwrap().flatten() {
                f(&std::fs::read(e.path()).unwrap());
                n += 1;
            }
        }
        assert!(n >= 10, "corpus too small: {n}");
    }

    /// The findings, spelled out (the corpus holds them as files too).
    #[test]
    fn findings() {
        super::target_url(b"?po%00stgres://pg:Zq9Secret@127.0.mode\x12x&ssl-ca=/a");
        super::target_url(
            b"mysive\x16=mysql_async&sslCmode=requql://root@127.0.0.1:3306lbe\rch6lbench",
        );
        super::values(b"3\nm");
        super::values(b"1M10000060000\r\nsec60000se");
        super::values(b"\n0");
        super::plan(b"name = \"t\"\nworkload = \"micro-read\"\nthreads = [1]\n[[servers]]\nserver = \"ma\\riadb:small\"\n");
    }
}
