//! `perf script`'s samples read back into where the server's time went: the frames named,
//! sorted into the kernel, locks, I/O, the network and the engine's own code, summed per
//! function, system call and stack; and profiles compared and averaged.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{
    FoldedStack, ProfileFunction, ProfileSyscall, ServerProfile, TOP_FUNCTIONS, TOP_STACKS,
};

/// One sample: its period (ns of CPU) and its frames, leaf first.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub period_ns: u64,
    pub frames: Vec<Frame>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub sym: String,
    pub module: String,
}

/// `perf script -F comm,pid,tid,period,ip,sym,dso`: a header line per sample
/// (`comm pid/tid period`), then one indented line per frame (`addr sym (dso)`), then a blank.
pub fn parse_script(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut cur: Option<Sample> = None;
    for line in text.lines() {
        if line.trim().is_empty() {
            out.extend(cur.take());
            continue;
        }
        if !line.starts_with(char::is_whitespace) {
            out.extend(cur.take());
            let period_ns = line
                .split_whitespace()
                .last()
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            cur = Some(Sample {
                period_ns,
                frames: Vec::new(),
            });
            continue;
        }
        let Some(s) = cur.as_mut() else { continue };
        let rest = line.trim();
        let rest = rest.split_once(char::is_whitespace).map_or("", |(_, r)| r);
        let (sym, dso) = match rest.rfind(" (") {
            Some(i) if rest.ends_with(')') => (&rest[..i], &rest[i + 2..rest.len() - 1]),
            _ => (rest, ""),
        };
        s.frames.push(Frame {
            sym: short_name(sym),
            module: module_name(dso),
        });
    }
    out.extend(cur);
    out
}

/// `f(int, char*)` → `f`; `f+0x1a` → `f`; no `;` (the folded format's separator).
fn short_name(sym: &str) -> String {
    let mut s = sym.trim();
    if let Some(i) = s.rfind("+0x") {
        s = &s[..i];
    }
    if s.ends_with(')') && !s.starts_with('(') {
        // The argument list: from the `(` matching the last `)`.
        let mut depth = 0;
        for (i, c) in s.char_indices().rev() {
            match c {
                ')' => depth += 1,
                '(' => {
                    depth -= 1;
                    if depth == 0 {
                        if i > 0 && !s[..i].ends_with("operator") {
                            s = &s[..i];
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    s.replace(';', ":")
}

fn module_name(dso: &str) -> String {
    if dso.contains("kernel.kallsyms") || dso.starts_with("[kernel") {
        return "[kernel]".into();
    }
    dso.rsplit('/').next().unwrap_or(dso).to_string()
}

/// Substrings of frames that mean waiting for or taking a lock (futexes, pthread mutexes,
/// InnoDB's srw/ssux locks and spin loop, PostgreSQL's LWLocks and spinlocks).
const LOCK_MARKS: &[&str] = &[
    "futex",
    "pthread_mutex_lock",
    "pthread_rwlock",
    "__lll_lock",
    "srw_lock",
    "srw_mutex",
    "ssux_lock",
    "sux_lock",
    "ut_delay",
    "LWLockAcquire",
    "s_lock",
    "spin_wait",
    "safe_mutex",
    "inline_mysql_mutex",
];

/// Frames of file I/O: its system calls, the page cache and the file systems.
const IO_MARKS: &[&str] = &[
    "sys_pread",
    "sys_pwrite",
    "sys_preadv",
    "sys_pwritev",
    "sys_fsync",
    "sys_fdatasync",
    "sys_sync_file_range",
    "sys_io_submit",
    "sys_io_getevents",
    "io_uring",
    "filemap_",
    "ext4_",
    "xfs_",
    "btrfs_",
    "iomap_",
    "blk_",
];

/// Frames of the network: socket calls and the TCP/Unix stacks.
const NET_MARKS: &[&str] = &[
    "sys_recv",
    "sys_send",
    "sock_",
    "tcp_",
    "unix_stream",
    "inet_",
    "__sys_recv",
    "__sys_send",
];

/// The storage engines' own code, by name prefix: InnoDB, MyISAM and the key cache, Aria,
/// MyRocks and RocksDB, and PostgreSQL's heap, B-tree and buffer manager.
const ENGINE_PREFIXES: &[&str] = &[
    "btr_",
    "buf_",
    "row_",
    "page_",
    "mtr_",
    "lock_",
    "trx_",
    "fil_",
    "log_",
    "dict_",
    "rec_",
    "cmp_",
    "fsp_",
    "ibuf_",
    "ha_innobase",
    "mi_",
    "_mi_",
    "ha_myisam",
    "key_cache",
    "simple_key_cache",
    "keycache",
    "maria_",
    "_ma_",
    "ha_maria",
    "pagecache",
    "rocksdb::",
    "myrocks::",
    "heap_",
    "heapgetpage",
    "_bt_",
    "bt",
    "ReadBuffer",
    "BufferAlloc",
    "index_",
    "ExecIndex",
];

fn is_engine(f: &Frame) -> bool {
    f.module.contains("ha_rocksdb")
        || f.module.contains("ha_tokudb")
        || ENGINE_PREFIXES.iter().any(|p| {
            f.sym.starts_with(p)
                // `bt` alone is PostgreSQL's btgettuple & co., not every name starting "bt".
                && (*p != "bt" || f.sym.starts_with("btget") || f.sym.starts_with("btbeginscan"))
        })
}

fn marked(frames: &[Frame], marks: &[&str]) -> bool {
    frames
        .iter()
        .any(|f| marks.iter().any(|m| f.sym.contains(m)))
}

/// The system call a stack is under: its outermost `__x64_sys_NAME` (or `__do_sys_NAME`).
fn syscall_of(frames: &[Frame]) -> Option<String> {
    frames.iter().rev().find_map(|f| {
        ["__x64_sys_", "__do_sys_", "__arm64_sys_", "__se_sys_"]
            .iter()
            .find_map(|p| f.sym.strip_prefix(p))
            .map(str::to_string)
    })
}

fn frame_key(f: &Frame) -> (String, String) {
    if f.sym == "[unknown]" || f.sym.is_empty() {
        // Unnamed code counted per binary: "[unknown]" in mariadbd says more than one total.
        ("[unknown]".into(), f.module.clone())
    } else {
        (f.sym.clone(), f.module.clone())
    }
}

/// The profile of a run's samples: per-op figures over `ops` operations.
pub fn summarize(samples: &[Sample], hz: u32, ops: u64) -> ServerProfile {
    let total_ns: u64 = samples.iter().map(|s| s.period_ns).sum();
    let per_op = |ns: u64| ns as f64 / 1e3 / ops.max(1) as f64;
    let share = |ns: u64| ns as f64 / total_ns.max(1) as f64;
    let mut self_ns: HashMap<(String, String), u64> = HashMap::new();
    let mut incl_ns: HashMap<(String, String), u64> = HashMap::new();
    let mut sys_ns: HashMap<String, u64> = HashMap::new();
    let mut stacks: HashMap<String, u64> = HashMap::new();
    let (mut kernel, mut lock, mut io, mut net, mut engine, mut unresolved) = (0, 0, 0, 0, 0, 0);
    for s in samples {
        let p = s.period_ns;
        if let Some(leaf) = s.frames.first() {
            *self_ns.entry(frame_key(leaf)).or_default() += p;
            kernel += u64::from(leaf.module == "[kernel]") * p;
            engine += u64::from(is_engine(leaf)) * p;
            unresolved += u64::from(leaf.sym == "[unknown]") * p;
        }
        let mut seen = HashSet::new();
        for f in &s.frames {
            let k = frame_key(f);
            if seen.insert(k.clone()) {
                *incl_ns.entry(k).or_default() += p;
            }
        }
        lock += u64::from(marked(&s.frames, LOCK_MARKS)) * p;
        io += u64::from(marked(&s.frames, IO_MARKS)) * p;
        net += u64::from(marked(&s.frames, NET_MARKS)) * p;
        if let Some(sc) = syscall_of(&s.frames) {
            *sys_ns.entry(sc).or_default() += p;
        }
        let folded: Vec<&str> = s.frames.iter().rev().map(|f| f.sym.as_str()).collect();
        *stacks.entry(folded.join(";")).or_default() += 1;
    }
    let mut by_self: Vec<_> = self_ns.iter().collect();
    by_self.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut by_incl: Vec<_> = incl_ns.iter().collect();
    by_incl.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut keys: Vec<&(String, String)> = Vec::new();
    for k in by_self
        .iter()
        .take(TOP_FUNCTIONS)
        .chain(by_incl.iter().take(TOP_FUNCTIONS / 2))
        .map(|(k, _)| *k)
    {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut functions: Vec<ProfileFunction> = keys
        .into_iter()
        .map(|k| {
            let sf = self_ns.get(k).copied().unwrap_or(0);
            ProfileFunction {
                name: k.0.clone(),
                module: k.1.clone(),
                self_us_per_op: per_op(sf),
                inclusive_us_per_op: per_op(incl_ns.get(k).copied().unwrap_or(0)),
                self_share: share(sf),
            }
        })
        .collect();
    functions.sort_by(|a, b| {
        b.self_us_per_op
            .total_cmp(&a.self_us_per_op)
            .then(b.inclusive_us_per_op.total_cmp(&a.inclusive_us_per_op))
    });
    let mut syscalls: Vec<ProfileSyscall> = sys_ns
        .into_iter()
        .map(|(name, ns)| ProfileSyscall {
            name,
            us_per_op: per_op(ns),
            share: share(ns),
        })
        .collect();
    syscalls.sort_by(|a, b| {
        b.us_per_op
            .total_cmp(&a.us_per_op)
            .then(a.name.cmp(&b.name))
    });
    syscalls.truncate(TOP_FUNCTIONS / 2);
    let mut folded: Vec<FoldedStack> = stacks
        .into_iter()
        .map(|(stack, samples)| FoldedStack { stack, samples })
        .collect();
    folded.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.stack.cmp(&b.stack)));
    if folded.len() > TOP_STACKS {
        let other: u64 = folded[TOP_STACKS..].iter().map(|f| f.samples).sum();
        folded.truncate(TOP_STACKS);
        folded.push(FoldedStack {
            stack: "[other stacks]".into(),
            samples: other,
        });
    }
    ServerProfile {
        hz,
        samples: samples.len() as u64,
        cpu_s: total_ns as f64 / 1e9,
        cpu_us_per_op: per_op(total_ns),
        coverage: None,
        kernel_share: share(kernel),
        lock_share: share(lock),
        io_share: share(io),
        network_share: share(net),
        engine_share: share(engine),
        unresolved_share: share(unresolved),
        functions,
        syscalls,
        folded,
    }
}

/// The functions whose self time per operation differs most between two profiles, largest
/// difference first: (name, µs/op in `a`, µs/op in `b`). A function absent from one side's
/// top list counts 0 there (below that side's cut).
pub fn differing_functions(
    a: &ServerProfile,
    b: &ServerProfile,
    n: usize,
) -> Vec<(String, f64, f64)> {
    let mut m: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for f in &a.functions {
        m.entry(f.name.clone()).or_default().0 += f.self_us_per_op;
    }
    for f in &b.functions {
        m.entry(f.name.clone()).or_default().1 += f.self_us_per_op;
    }
    let mut v: Vec<(String, f64, f64)> = m.into_iter().map(|(k, (x, y))| (k, x, y)).collect();
    v.sort_by(|x, y| {
        (y.2 - y.1)
            .abs()
            .total_cmp(&(x.2 - x.1).abs())
            .then(x.0.cmp(&y.0))
    });
    v.truncate(n);
    v
}

/// The mean of several runs' profiles (a point's runs, a cell's passes): per-op figures and
/// shares averaged, functions matched by name and module.
pub fn mean(ps: &[&ServerProfile]) -> Option<ServerProfile> {
    let first = ps.first()?;
    if ps.len() == 1 {
        return Some((*first).clone());
    }
    let k = ps.len() as f64;
    let avg = |f: fn(&ServerProfile) -> f64| ps.iter().map(|p| f(p)).sum::<f64>() / k;
    let mut funcs: BTreeMap<(String, String), ProfileFunction> = BTreeMap::new();
    for p in ps {
        for f in &p.functions {
            let e = funcs
                .entry((f.name.clone(), f.module.clone()))
                .or_insert_with(|| ProfileFunction {
                    name: f.name.clone(),
                    module: f.module.clone(),
                    ..Default::default()
                });
            e.self_us_per_op += f.self_us_per_op / k;
            e.inclusive_us_per_op += f.inclusive_us_per_op / k;
            e.self_share += f.self_share / k;
        }
    }
    let mut functions: Vec<ProfileFunction> = funcs.into_values().collect();
    functions.sort_by(|a, b| b.self_us_per_op.total_cmp(&a.self_us_per_op));
    let mut stacks: BTreeMap<&str, u64> = BTreeMap::new();
    for p in ps {
        for s in &p.folded {
            *stacks.entry(&s.stack).or_default() += s.samples;
        }
    }
    let mut folded: Vec<FoldedStack> = stacks
        .into_iter()
        .map(|(s, n)| FoldedStack {
            stack: s.to_string(),
            samples: n,
        })
        .collect();
    folded.sort_by_key(|f| std::cmp::Reverse(f.samples));
    Some(ServerProfile {
        hz: first.hz,
        samples: ps.iter().map(|p| p.samples).sum(),
        cpu_s: ps.iter().map(|p| p.cpu_s).sum(),
        cpu_us_per_op: avg(|p| p.cpu_us_per_op),
        coverage: {
            let known: Vec<f64> = ps.iter().filter_map(|p| p.coverage).collect();
            (!known.is_empty()).then(|| known.iter().sum::<f64>() / known.len() as f64)
        },
        kernel_share: avg(|p| p.kernel_share),
        lock_share: avg(|p| p.lock_share),
        io_share: avg(|p| p.io_share),
        network_share: avg(|p| p.network_share),
        engine_share: avg(|p| p.engine_share),
        unresolved_share: avg(|p| p.unresolved_share),
        functions,
        syscalls: first.syscalls.clone(),
        folded,
    })
}
