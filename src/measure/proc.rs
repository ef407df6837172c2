//! Resource samplers from /proc: a server's CPU, I/O and memory (by pid), and the whole host's
//! busy CPU (to see what other processes used during a run).

use std::path::Path;

/// Clock ticks per second of /proc/*/stat and /proc/stat (USER_HZ).
fn ticks_per_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// Fields of /proc/PID/stat after the command name (which may contain spaces and parentheses).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// True if `pid` exists and is not a zombie (a dead server whose parent has not reaped it yet).
pub fn alive(pid: u32) -> bool {
    match stat_fields(pid) {
        Some(f) => !matches!(f.first().map(String::as_str), Some("Z") | Some("X")),
        None => false,
    }
}

/// The direct children of `pid` (PostgreSQL backends and helpers of a postmaster).
pub fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    // /proc/PID/task/*/children lists children per thread; cheaper than scanning all of /proc.
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
                out.extend(s.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The parent of `pid` (field 4 of /proc/PID/stat).
pub fn parent(pid: u32) -> Option<u32> {
    stat_fields(pid)?.get(1)?.parse().ok()
}

/// The command name of `pid` (/proc/PID/comm: the executable's name, 15 bytes at most).
pub fn comm(pid: u32) -> Option<String> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(s.trim_end().to_string())
}

/// Inodes of the TCP sockets listening on `port` (any address, IPv4 and IPv6), from
/// /proc/net/tcp and /proc/net/tcp6.
pub fn tcp_listen_inodes(port: u16) -> Vec<u64> {
    let mut out = Vec::new();
    for f in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        out.extend(parse_tcp_listen(&text, port));
    }
    out
}

/// Lines of /proc/net/tcp{,6}: `sl local_address rem_address st ... uid timeout inode`, the
/// local address as `HEXADDR:HEXPORT`, state 0A = LISTEN.
fn parse_tcp_listen(text: &str, port: u16) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let local_port = u16::from_str_radix(f.get(1)?.rsplit_once(':')?.1, 16).ok()?;
            (local_port == port && *f.get(3)? == "0A").then(|| f.get(9)?.parse().ok())?
        })
        .collect()
}

/// Inodes of the Unix sockets listening on `path`, from /proc/net/unix.
pub fn unix_listen_inodes(path: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    // The kernel shows the path as it was bound; the URL may name it another way.
    let canon = std::fs::canonicalize(path).ok();
    parse_unix_listen(&text)
        .into_iter()
        .filter(|(p, _)| {
            let p = Path::new(p);
            p == path || canon.as_deref().is_some_and(|c| p == c)
        })
        .map(|(_, inode)| inode)
        .collect()
}

/// Lines of /proc/net/unix: `Num RefCount Protocol Flags Type St Inode Path`; a listening
/// socket has the accept flag (0x10000) in Flags.
fn parse_unix_listen(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let flags = u32::from_str_radix(f.get(3)?, 16).ok()?;
            if flags & 0x10000 == 0 {
                return None;
            }
            Some((f.get(7)?.to_string(), f.get(6)?.parse().ok()?))
        })
        .collect()
}

/// Who holds one of some sockets open, from a scan of /proc/*/fd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SocketOwner {
    /// The lowest pid that has one of the sockets among its descriptors.
    Found(u32),
    /// No readable process has it; `unreadable` processes' descriptors could not be read
    /// (other users' processes, without the privilege to look).
    NotFound { unreadable: usize },
}

/// Find the process that has a descriptor `socket:[INODE]` for one of `inodes`. Only the
/// processes we may read are looked at.
pub fn socket_owner(inodes: &[u64]) -> SocketOwner {
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    pids.sort_unstable();
    let mut unreadable = 0;
    for pid in pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            unreadable += 1;
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if wanted.iter().any(|w| target.as_os_str() == w.as_str()) {
                    return SocketOwner::Found(pid);
                }
            }
        }
    }
    SocketOwner::NotFound { unreadable }
}

/// Thread ids of a process.
pub fn threads(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// CPU, I/O and memory of a server process and its children, at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcSample {
    pub user_s: f64,
    pub sys_s: f64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub rss_bytes: u64,
    /// Context switches summed over every thread (and, for PostgreSQL, every child process):
    /// `voluntary_ctxt_switches` (the thread went to sleep, e.g. waiting for the next query)
    /// and `nonvoluntary_ctxt_switches` (it was preempted while runnable). Threads that
    /// exited between two samples take theirs with them.
    pub voluntary_cs: u64,
    pub preempted_cs: u64,
}

impl ProcSample {
    /// Sample `pid` (all its threads) plus its live children. Children that exited and were
    /// reaped count through the parent's cutime/cstime (PostgreSQL backends of closed
    /// connections); their I/O of exited children is not visible and is missed.
    pub fn of_tree(pid: u32) -> Option<Self> {
        let hz = ticks_per_s();
        let f = stat_fields(pid)?;
        // Fields after the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
        let num =
            |f: &[String], i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        let mut s = ProcSample {
            user_s: (num(&f, 11) + num(&f, 13)) / hz,
            sys_s: (num(&f, 12) + num(&f, 14)) / hz,
            rss_bytes: rss_bytes(pid),
            ..Default::default()
        };
        let (r, w) = io_bytes(pid);
        s.read_bytes += r;
        s.write_bytes += w;
        (s.voluntary_cs, s.preempted_cs) = context_switches(pid);
        for c in children(pid) {
            if let Some(cf) = stat_fields(c) {
                s.user_s += num(&cf, 11) / hz;
                s.sys_s += num(&cf, 12) / hz;
                let (r, w) = io_bytes(c);
                s.read_bytes += r;
                s.write_bytes += w;
                let (v, n) = context_switches(c);
                s.voluntary_cs += v;
                s.preempted_cs += n;
            }
        }
        Some(s)
    }

    pub fn cpu_s(&self) -> f64 {
        self.user_s + self.sys_s
    }
}

/// Voluntary and involuntary context switches of all of `pid`'s threads so far
/// (/proc/PID/task/*/status).
fn context_switches(pid: u32) -> (u64, u64) {
    let (mut v, mut n) = (0, 0);
    for t in threads(pid) {
        let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/task/{t}/status")) else {
            continue;
        };
        for l in s.lines() {
            let num = |x: &str| x.trim().parse::<u64>().unwrap_or(0);
            if let Some(x) = l.strip_prefix("voluntary_ctxt_switches:") {
                v += num(x);
            } else if let Some(x) = l.strip_prefix("nonvoluntary_ctxt_switches:") {
                n += num(x);
            }
        }
    }
    (v, n)
}

/// read_bytes / write_bytes of /proc/PID/io: bytes that reached the storage layer.
fn io_bytes(pid: u32) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    let get = |k: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(k))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    (get("read_bytes:"), get("write_bytes:"))
}

/// Resident memory of one process (VmRSS).
fn rss_bytes(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// CPU seconds the host's user-space processes used so far (all CPUs): user + nice + system
/// of /proc/stat, less the kernel's own threads, and without interrupt time. What is left out
/// is the kernel's work for everyone — block I/O completion (kblockd), the journal, writeback,
/// softirqs — which a server's own writes cause: sql-bench's CREATE and DROP of 500 tables made
/// it 0.10–0.19 of a CPU, which read as other processes disturbing the run. Another process
/// that disturbs a run shows in its own user and system time. Steal time is another VM's.
pub fn host_busy_s() -> f64 {
    let s = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let line = s.lines().next().unwrap_or("");
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0.0);
    ((at(0) + at(1) + at(2)) / ticks_per_s() - kernel_threads_s()).max(0.0)
}

/// `flags` bit of /proc/PID/stat for a kernel thread (PF_KTHREAD).
const PF_KTHREAD: u64 = 0x0020_0000;

/// CPU seconds the kernel's own threads (PF_KTHREAD) used so far, summed: a scan of
/// /proc/*/stat (about 1 ms with a hundred processes).
fn kernel_threads_s() -> f64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0.0;
    };
    let mut ticks = 0u64;
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            ticks += kernel_thread_ticks(&stat).unwrap_or(0);
        }
    }
    ticks as f64 / ticks_per_s()
}

/// utime + stime of a /proc/PID/stat line if it is a kernel thread's, else None.
fn kernel_thread_ticks(stat: &str) -> Option<u64> {
    // After the command name (which may hold spaces and parentheses): state, ppid, pgrp,
    // session, tty, tpgid, flags (index 6), minflt, cminflt, majflt, cmajflt, utime (11),
    // stime (12).
    let (_, rest) = stat.rsplit_once(')')?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok());
    (num(6)? & PF_KTHREAD != 0).then(|| num(11).unwrap_or(0) + num(12).unwrap_or(0))
}

/// Parse a CPU list such as `0`, `0,2` or `0-3,6` (what taskset -c takes).
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let bad = || format!("'{s}' is not a CPU list (e.g. 0 or 0-1 or 0,2)");
        if let Some((a, b)) = part.split_once('-') {
            let (a, b): (usize, usize) =
                (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
            if a > b {
                return Err(bad());
            }
            out.extend(a..=b);
        } else {
            out.push(part.parse().map_err(|_| bad())?);
        }
    }
    if out.iter().any(|&c| c >= libc::CPU_SETSIZE as usize) {
        return Err(format!("'{s}': CPU number too large"));
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Pin one thread or process (`tid` 0: the calling thread) to `cpus`.
pub fn set_affinity(tid: u32, cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET stays in bounds (parse_cpu_list checks the range).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(
            tid as libc::pid_t,
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Pin every thread of `pid` and of its children (new threads and forked backends inherit it).
pub fn pin_tree(pid: u32, cpus: &[usize]) -> std::io::Result<()> {
    let mut procs = vec![pid];
    procs.extend(children(pid));
    for p in procs {
        for t in threads(p) {
            // A thread may exit between listing and pinning: ignore only that case.
            match set_affinity(t, cpus) {
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                other => other?,
            }
        }
    }
    Ok(())
}

/// Total size of the files under `dir` as allocated on disk (st_blocks: sparse page-compressed
/// files count what they use).
pub fn dir_allocated_bytes(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if let Ok(m) = e.metadata() {
                if m.is_dir() {
                    total += dir_allocated_bytes(&e.path());
                } else {
                    total += m.blocks() * 512;
                }
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_threads_are_told_by_their_flags() {
        // A kworker (flags 0x04208060: PF_KTHREAD set), 43 + 380 ticks.
        let kworker = "44 (kworker/1:1H-kblockd) I 2 0 0 0 -1 69238880 0 0 0 0 43 380 0 0 0 -20 1 0 160 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0";
        assert_eq!(kernel_thread_ticks(kworker), Some(423));
        // A server (flags 0x00400100), its name with a space and a parenthesis.
        let server = "2223 (mariadbd (x) y) S 2178 2223 2178 0 -1 4194560 60113 0 0 0 32100 1500 0 0 20 0 60 0 9000 0 0";
        assert_eq!(kernel_thread_ticks(server), None);
        assert_eq!(kernel_thread_ticks("garbage"), None);
        // The host's processes: never more than user + nice + system.
        let stat = || -> Vec<f64> {
            let s = std::fs::read_to_string("/proc/stat").unwrap();
            let first = s.lines().next().unwrap().to_string();
            first
                .split_whitespace()
                .skip(1)
                .map(|x| x.parse().unwrap())
                .collect()
        };
        let v = stat();
        let busy = host_busy_s();
        let v2 = stat();
        assert!(busy <= (v2[0] + v2[1] + v2[2]) / ticks_per_s() + 1e-9);
        assert!(busy >= 0.0 && v[0] > 0.0);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("0-2,5").unwrap(), vec![0, 1, 2, 5]);
        assert!(parse_cpu_list("2-1").is_err());
        assert!(parse_cpu_list("x").is_err());
        assert!(parse_cpu_list("").is_err());
    }

    #[test]
    fn samples_self() {
        let me = std::process::id();
        assert!(alive(me));
        let s = ProcSample::of_tree(me).unwrap();
        assert!(s.rss_bytes > 0);
        assert!(host_busy_s() > 0.0);
    }

    #[test]
    fn parses_listening_sockets() {
        let tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:5802 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:5802 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0000000000000000 20 4 30 10 -1
   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 17 1 0000000000000000 100 0 0 10 0
";
        assert_eq!(parse_tcp_listen(tcp, 0x5802), vec![4242]);
        assert_eq!(parse_tcp_listen(tcp, 22), vec![17]);
        assert!(parse_tcp_listen(tcp, 1).is_empty());
        let unix = "Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 5151 /tmp/m.sock
0000000000000000: 00000003 00000000 00000000 0001 03 5252 /tmp/m.sock
0000000000000000: 00000003 00000000 00000000 0001 03 5353
";
        assert_eq!(
            parse_unix_listen(unix),
            vec![("/tmp/m.sock".to_string(), 5151)]
        );
    }

    #[test]
    fn finds_own_listening_socket() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let inodes = tcp_listen_inodes(port);
        assert_eq!(inodes.len(), 1);
        assert_eq!(
            socket_owner(&inodes),
            SocketOwner::Found(std::process::id())
        );
        assert_eq!(
            parent(std::process::id()),
            Some(std::os::unix::process::parent_id())
        );
    }
}
