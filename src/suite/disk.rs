//! The suite's folder on disk: a pass's cells, the results a cell keeps or sets aside, and
//! which cells a pass has still to run.

use super::*;

/// Attempts of one run of a cell whose runs other processes disturbed: the first and two
/// more on the same warm server, before the suite keeps the last and moves on.
pub(super) const ATTEMPTS: u32 = 3;

/// Prefixes of result folders the suite set aside inside a cell's folder: an attempt that
/// was disturbed (and run again), and a result of a server process that a resumed run
/// replaced (its section was measured again on one process). Claims do not read them; they
/// stay for whoever wants to look.
pub(super) const SET_ASIDE: [&str; 2] = ["disturbed-", "resumed-"];

/// The folder of a pass's cells: pass 1 at the top (as before passes, so older results
/// resume), pass N in `pass-N/`.
pub fn pass_dir(out_dir: &Path, pass: u32) -> PathBuf {
    if pass <= 1 {
        out_dir.to_path_buf()
    } else {
        out_dir.join(format!("pass-{pass}"))
    }
}

/// The highest pass with a folder under `out_dir` (1 when there is none beyond the first).
pub fn passes_on_disk(out_dir: &Path) -> u32 {
    std::fs::read_dir(out_dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str()?.strip_prefix("pass-")?.parse().ok())
                .max()
                .unwrap_or(1)
        })
        .unwrap_or(1)
}

/// The result folders a cell keeps for its claims, oldest first (a run names its folder by
/// its start time).
pub(super) fn kept_results(cell_dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(cell_dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !SET_ASIDE.iter().any(|pre| name.starts_with(pre)) && p.join("result.json").exists()
        })
        .collect();
    out.sort();
    out
}

/// A result folder's status (`complete`, `partial`, `failed`), if its result reads.
pub(super) fn result_status(result_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(result_dir.join("result.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["status"].as_str().map(str::to_string)
}

/// How many complete results a cell's folder keeps.
pub(super) fn complete_results(cell_dir: &Path) -> usize {
    kept_results(cell_dir)
        .iter()
        .filter(|p| result_status(p).as_deref() == Some("complete"))
        .count()
}

/// Every result a cell keeps, of passes 1 to `passes`: what its claims read.
pub fn cell_docs(out_dir: &Path, cell: &Cell, passes: u32, owners: Owners) -> Vec<claims::CellDoc> {
    let mut out = Vec::new();
    for pass in 1..=passes {
        for p in kept_results(&pass_dir(out_dir, pass).join(&cell.name)) {
            if let Ok(doc) = crate::report::load(&p.join("result.json"), owners) {
                out.push(claims::CellDoc { pass, doc });
            }
        }
    }
    out
}

/// Whether other processes disturbed a result: a run flagged so, or a measurement that a
/// workload keeps in its own sections (sql-bench's operations, iiBench's windows). Some(the
/// most CPUs others used in a run, when runs say it).
pub(super) fn disturbance(doc: &ResultDoc, owners: Owners) -> Option<Option<f64>> {
    let runs: Vec<f64> = doc
        .points
        .iter()
        .flat_map(|p| &p.runs)
        .filter(|r| r.disturbed)
        .map(|r| r.host_cpu.others_cpus)
        .collect();
    let parts: usize = owners.iter().map(|o| o.disturbed_parts(doc)).sum();
    if runs.is_empty() && parts == 0 {
        return None;
    }
    Some(runs.into_iter().reduce(f64::max))
}

/// Move a result folder aside within its cell folder (`PREFIX<name>`); a name taken already
/// gets a number.
pub(super) fn set_aside(result_dir: &Path, prefix: &str) -> std::io::Result<()> {
    let name = result_dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("result");
    let parent = result_dir.parent().unwrap_or(Path::new("."));
    for n in 0..1000 {
        let to = if n == 0 {
            parent.join(format!("{prefix}{name}"))
        } else {
            parent.join(format!("{prefix}{name}-{n}"))
        };
        if !to.exists() {
            return std::fs::rename(result_dir, to);
        }
    }
    Err(std::io::Error::other("too many set-aside results"))
}

/// The cells a pass runs, in plan order: its unfinished cells, and with them every other cell
/// of the same section on the same server. A resumed pass starts the server again, and a
/// claim compares cells of one section: measured again together, they are never a fresh
/// server's cells against a warm one's. Cells of other sections are kept.
pub(super) fn pass_todo<'c>(
    plan: &Plan,
    cells: &'c [Cell],
    dir: &Path,
    pass: u32,
) -> Vec<&'c Cell> {
    let unfinished =
        |c: &Cell| complete_results(&dir.join(&c.name)) < plan.sections[c.section].repeats as usize;
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for c in cells.iter().filter(|c| unfinished(c)) {
        if !groups.contains(&(c.section, c.server)) {
            groups.push((c.section, c.server));
        }
    }
    let todo: Vec<&Cell> = cells
        .iter()
        .filter(|c| groups.contains(&(c.section, c.server)))
        .collect();
    for &(section, server) in &groups {
        let again = todo
            .iter()
            .filter(|c| (c.section, c.server) == (section, server) && !unfinished(c))
            .count();
        if again > 0 {
            let label = &plan.sections[section].name;
            eprintln!(
                "suite: pass {pass}: section {} on {} has unfinished cells: its {again} complete cell(s) run again too, on the same server process (their results are set aside as resumed-*)",
                if label.is_empty() { &plan.sections[section].workload } else { label },
                plan.servers[server].name()
            );
        }
    }
    todo
}
