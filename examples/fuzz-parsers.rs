//! A seeded, long-running property loop over the fuzz entry points of `enginebench::fuzz`
//! (the same functions the cargo-fuzz targets in fuzz/ call), for machines without a nightly
//! toolchain or cargo-fuzz. It mutates seed inputs with a dictionary of meaningful tokens,
//! runs each target under catch_unwind and prints every distinct failure with its input.
//!
//!     cargo run --release --example fuzz-parsers -- --minutes 5            # each target 5 min
//!     cargo run --release --example fuzz-parsers -- --target plan --seconds 30 --seed 7
//!
//! Exit 0 when nothing failed, 1 when something did (the inputs are printed, Rust-escaped).

use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use enginebench::fuzz::{TARGETS, URL_SECRET};

struct Rng(u64);

impl Rng {
    /// splitmix64: small, seedable, good enough to pick mutations.
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

const COMMON: &[&str] = &[
    "",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\0",
    "é",
    "日本",
    "\u{feff}",
    "\u{202e}",
    "%",
    "%zz",
    "%00",
    "%ff",
    "\\",
    "\"",
    "'",
    "#",
    ";",
    ",",
    "=",
    "&",
    "?",
    "/",
    ":",
    "@",
    "[",
    "]",
    "{",
    "}",
    "-",
    "+",
    ".",
    "..",
    "0",
    "1",
    "9",
    "00",
    "-1",
    "99999999999999999999",
    "18446744073709551616",
    "1e309",
    "NaN",
    "inf",
    "１",
    "١",
];

const URL_TOKENS: &[&str] = &[
    "mysql://",
    "mariadb://",
    "postgres://",
    "postgresql://",
    "sqlite://",
    "sqlite:///",
    "foo://",
    "root",
    "user",
    "root@",
    "u:",
    "@",
    "127.0.0.1",
    "localhost",
    "[::1]",
    "::1",
    ":3306",
    ":0",
    ":65535",
    ":65536",
    ":99999",
    "/db",
    "/a/b",
    "/%2F",
    "?socket=/tmp/m.sock",
    "?host=/run/pg",
    "socket=",
    "host=",
    "driver=wire",
    "driver=mysql_async",
    "driver=x",
    "ssl-mode=require",
    "ssl-mode=verify-ca",
    "ssl-mode=verify-full",
    "ssl-mode=prefer",
    "ssl-mode=disable",
    "sslmode=REQUIRED",
    "ssl-mode=",
    "ssl-ca=/tmp/ca.pem",
    "ssl-ca=",
    "sslrootcert=x",
    "password=p",
    "sslkey=k",
    "&",
    "?",
    "#frag",
    "%40",
    "%3A",
];

const VALUE_TOKENS: &[&str] = &[
    "0",
    "1",
    "4",
    "16",
    "60",
    "100000",
    "100001",
    ".",
    "5.",
    ".5",
    "ms",
    "s",
    "m",
    "h",
    "min",
    "sec",
    "k",
    "K",
    "M",
    "G",
    "_",
    ",",
    "e",
    "E",
    "1e3",
    "0x10",
    "-",
    "+",
    "  ",
    "1,4,16",
    "3m",
    "500ms",
    "1h",
    "2.5k",
    "999999999",
    "1000000000",
    "4294967296",
    "9223372036854775807",
];

const PLAN_TOKENS: &[&str] = &[
    "\n[[servers]]\n",
    "server = \"mariadb:small\"\n",
    "server = \"postgres\"\n",
    "server = \"mariadb:/nonexistent.cnf\"\n",
    "server = \"oracle\"\n",
    "opts = [\"a=1\"]\n",
    "opts = [\"nokey\"]\n",
    "threads = [1, 4]\n",
    "threads = []\n",
    "threads = [0]\n",
    "threads = [-1]\n",
    "threads = [99999999999999]\n",
    "engines = [\"InnoDB\"]\n",
    "engines = []\n",
    "\n[run]\n",
    "\n[quick]\n",
    "\n[quick.run]\n",
    "\n[[variants]]\n",
    "name = \"v\"\n",
    "name = \"\"\n",
    "workload = \"tpcc\"\n",
    "workload = \"nope\"\n",
    "table_size = \"1M\"\n",
    "runs = 2\n",
    "runs = -2\n",
    "warmup = 1.5\n",
    "x = true\n",
    "y = false\n",
    "z = {a = 1}\n",
    "d = 1979-05-27\n",
    "threads = \"1,2\"\n",
    "target = \"x\"\n",
    "[[servers]]\nserver = \"mariadb\"\n[run]\n",
    "\"",
    "[",
    "]",
    "=",
    "\n",
];

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let v: Vec<String> = match target {
        "target_url" => vec![
            "mysql://root@127.0.0.1:3306/bench".into(),
            format!("mysql://root:{URL_SECRET}@localhost/db?socket=/tmp/m.sock"),
            format!("postgres://pg:{URL_SECRET}@127.0.0.1:5432/db?ssl-mode=verify-ca&ssl-ca=/x.pem"),
            "postgres://pg@localhost:5432/db?host=/run/pg".into(),
            "sqlite:///tmp/a.db".into(),
            format!("mariadb://u:{URL_SECRET}@h/db?driver=mysql_async&ssl-mode=require"),
        ],
        "values" => ["60s", "1M", "1,4,16", "2.5k", "500ms", "100k", "3m"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        "workload_file" => vec![
            include_str!("../workloads/ycsb-a.toml").to_string(),
            include_str!("../workloads/tpcb.toml").to_string(),
        ],
        _ => vec![
            include_str!("../plans/read-2007.toml").to_string(),
            "name = \"t\"\nworkload = \"oltp_point_select\"\nthreads = [1]\n[[servers]]\nserver = \"postgres:small\"\n[[variants]]\nname = \"a\"\n[variants.run]\nruns = 1\n".to_string(),
        ],
    };
    v.into_iter().map(String::into_bytes).collect()
}

fn tokens(target: &str) -> &'static [&'static str] {
    match target {
        "target_url" => URL_TOKENS,
        "values" => VALUE_TOKENS,
        _ => PLAN_TOKENS,
    }
}

/// One to eight random edits of a seed: insert a token, delete or duplicate a span, change a
/// byte, splice in part of another seed.
fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], toks: &[&str]) -> Vec<u8> {
    let mut v = seeds[rng.below(seeds.len())].clone();
    if rng.below(8) == 0 {
        v.clear();
    }
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(v.len() + 1);
        match rng.below(7) {
            0 | 1 => {
                let t = if rng.below(3) == 0 {
                    rng.pick(COMMON)
                } else {
                    rng.pick(toks)
                };
                v.splice(at..at, t.bytes());
            }
            2 => {
                let end = (at + 1 + rng.below(16)).min(v.len());
                if at < end {
                    v.drain(at..end);
                }
            }
            3 => {
                let end = (at + 1 + rng.below(16)).min(v.len());
                let span = v[at.min(end)..end].to_vec();
                v.splice(at..at, span);
            }
            4 => {
                if at < v.len() {
                    v[at] = rng.next() as u8;
                }
            }
            5 => {
                let other = &seeds[rng.below(seeds.len())];
                let a = rng.below(other.len() + 1);
                let b = (a + rng.below(32)).min(other.len());
                v.splice(at..at, other[a..b].iter().copied());
            }
            _ => {
                if at < v.len() {
                    v[at] = v[at].to_ascii_uppercase();
                }
            }
        }
    }
    v
}

fn main() {
    let mut secs_each = 60u64;
    let mut only: Option<String> = None;
    let mut seed = 1u64;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let val = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--minutes" => secs_each = val.parse::<u64>().unwrap_or(1) * 60,
            "--seconds" => secs_each = val.parse().unwrap_or(60),
            "--target" => only = Some(val),
            "--seed" => seed = val.parse().unwrap_or(1),
            other => {
                eprintln!("fuzz-parsers: unknown argument {other} (--minutes N | --seconds N | --target NAME | --seed N)");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    // Findings are reported by this loop, not by the default hook's backtrace text.
    panic::set_hook(Box::new(|_| {}));
    let mut failed = false;
    for (name, f) in TARGETS {
        if only.as_deref().is_some_and(|o| o != *name) {
            continue;
        }
        let seeds = seeds(name);
        let toks = tokens(name);
        let mut rng = Rng(seed ^ name.len() as u64);
        let mut findings: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        let mut execs = 0u64;
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(secs_each) {
            for _ in 0..256 {
                let input = mutate(&mut rng, &seeds, toks);
                execs += 1;
                if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| f(&input))) {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    // One finding per distinct message head (the input varies, the bug not).
                    let key: String = msg.split(['(', ':']).next().unwrap_or("").to_string();
                    findings.entry(key).or_insert(input);
                }
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "{name}: {execs} executions in {secs:.0} s ({:.0}/s), seed {seed}, {} distinct failures",
            execs as f64 / secs,
            findings.len()
        );
        for (k, input) in &findings {
            failed = true;
            let s = String::from_utf8_lossy(input);
            let msg = panic::catch_unwind(AssertUnwindSafe(|| f(input)))
                .err()
                .and_then(|p| {
                    p.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                })
                .unwrap_or_else(|| k.clone());
            println!("  FAIL {name} input {s:?}\n       {msg}");
        }
    }
    std::process::exit(if failed { 1 } else { 0 });
}
