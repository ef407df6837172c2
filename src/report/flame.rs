//! Flame graphs of `--profile-server` profiles: plain SVG (a `<title>` per frame is the
//! tooltip; no script is needed to read it), one per profile and a differential one for two,
//! and the "functions that differ most" of two points, for `compare` and the claims.

use std::collections::BTreeMap;

use serde::Serialize;

use super::svg::escape;
use super::Point;
use crate::measure::profile::{self, FoldedStack, ServerProfile};

const WIDTH: f64 = 960.0;
const ROW: f64 = 16.0;
/// Frames narrower than this (pixels) are not drawn.
const MIN_W: f64 = 0.3;

/// A server function's self time per operation on both sides of a comparison.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FunctionDiff {
    pub name: String,
    pub a_us_per_op: f64,
    pub b_us_per_op: f64,
}

/// The mean profile over a point's runs (None when no run was profiled).
pub fn point_profile(p: &Point) -> Option<ServerProfile> {
    let v: Vec<&ServerProfile> = p
        .runs
        .iter()
        .filter_map(|r| r.server_profile.as_ref())
        .collect();
    profile::mean(&v)
}

/// The functions whose self µs/op differ most between the two points' profiles.
pub fn functions_differ(a: &ServerProfile, b: &ServerProfile, n: usize) -> Vec<FunctionDiff> {
    profile::differing_functions(a, b, n)
        .into_iter()
        .map(|(name, a_us_per_op, b_us_per_op)| FunctionDiff {
            name,
            a_us_per_op,
            b_us_per_op,
        })
        .collect()
}

#[derive(Default)]
struct Node {
    a: f64,
    b: f64,
    children: BTreeMap<String, Node>,
}

/// The tree of folded stacks, each stack weighted `scale` per sample (µs/op of a sample).
fn add(root: &mut Node, stacks: &[FoldedStack], scale: f64, side_b: bool) {
    for s in stacks {
        let v = s.samples as f64 * scale;
        let mut n = &mut *root;
        for frame in std::iter::once("all").chain(s.stack.split(';')) {
            n = n.children.entry(frame.to_string()).or_default();
            if side_b {
                n.b += v;
            } else {
                n.a += v;
            }
        }
    }
}

fn scale_of(p: &ServerProfile) -> f64 {
    let n: u64 = p.folded.iter().map(|s| s.samples).sum();
    p.cpu_us_per_op / n.max(1) as f64
}

fn depth(n: &Node) -> usize {
    n.children.values().map(|c| 1 + depth(c)).max().unwrap_or(0)
}

/// A warm colour from the name (stable across graphs, so one function looks the same).
fn warm(name: &str) -> String {
    let h = name
        .bytes()
        .fold(2166136261u32, |h, c| (h ^ c as u32).wrapping_mul(16777619));
    format!(
        "rgb({},{},{})",
        205 + (h % 50),
        80 + ((h >> 8) % 130),
        40 + ((h >> 16) % 50)
    )
}

/// Red where B spends more than A, blue where less, by the share of the larger.
fn diff_colour(a: f64, b: f64) -> String {
    let d = (b - a) / a.max(b).max(1e-12);
    let k = (d.abs().min(1.0) * 200.0) as u32;
    if d >= 0.0 {
        format!("rgb(255,{},{})", 255 - k, 255 - k)
    } else {
        format!("rgb({},{},255)", 255 - k, 255 - k)
    }
}

struct Draw<'a> {
    out: String,
    total: f64,
    height: f64,
    diff: bool,
    unit: &'a str,
}

impl Draw<'_> {
    fn frame(&mut self, name: &str, n: &Node, x: f64, level: usize) {
        let v = if self.diff { n.a.max(n.b) } else { n.a };
        let w = v / self.total * WIDTH;
        if w < MIN_W {
            return;
        }
        let y = self.height - (level as f64 + 1.0) * ROW;
        let fill = if self.diff {
            diff_colour(n.a, n.b)
        } else {
            warm(name)
        };
        let title = if self.diff {
            format!(
                "{name}: A {:.2} {u}, B {:.2} {u} ({:+.2})",
                n.a,
                n.b,
                n.b - n.a,
                u = self.unit
            )
        } else {
            format!(
                "{name}: {:.2} {} ({:.1} %)",
                n.a,
                self.unit,
                100.0 * n.a / self.total.max(1e-12)
            )
        };
        self.out.push_str(&format!(
            "<g><title>{}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{fill}\" rx=\"1\"/>",
            escape(&title),
            ROW - 1.0
        ));
        let chars = ((w - 4.0) / 6.5) as usize;
        if chars >= 3 {
            let label: String = if name.chars().count() > chars {
                name.chars().take(chars - 2).chain("..".chars()).collect()
            } else {
                name.to_string()
            };
            self.out.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                x + 3.0,
                y + ROW - 4.5,
                escape(&label)
            ));
        }
        self.out.push_str("</g>");
        let mut cx = x;
        for (cn, c) in &n.children {
            self.frame(cn, c, cx, level + 1);
            let cv = if self.diff { c.a.max(c.b) } else { c.a };
            cx += cv / self.total * WIDTH;
        }
    }
}

fn svg(root: &Node, diff: bool, caption: &str) -> String {
    let Some(all) = root.children.get("all") else {
        return String::new();
    };
    let levels = depth(all) + 1;
    let height = levels as f64 * ROW + 22.0;
    let total = if diff { all.a.max(all.b) } else { all.a };
    let mut d = Draw {
        out: String::new(),
        total: total.max(1e-12),
        height: height - 4.0,
        diff,
        unit: "µs/op",
    };
    d.frame("all", all, 0.0, 0);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flame\" width=\"{WIDTH}\" height=\"{height:.0}\" viewBox=\"0 0 {WIDTH} {height:.0}\" font-family=\"monospace\" font-size=\"11\"><text x=\"0\" y=\"12\" font-size=\"12\">{}</text>{}</svg>",
        escape(caption),
        d.out
    )
}

/// The flame graph of one profile: frame width is its inclusive µs per operation.
pub fn flame_svg(p: &ServerProfile, caption: &str) -> String {
    let mut root = Node::default();
    add(&mut root, &p.folded, scale_of(p), false);
    svg(&root, false, caption)
}

/// The differential flame graph of A and B: frame width is the larger side's µs per operation,
/// red where B spends more, blue where B spends less.
pub fn diff_svg(a: &ServerProfile, b: &ServerProfile, caption: &str) -> String {
    let mut root = Node::default();
    add(&mut root, &a.folded, scale_of(a), false);
    add(&mut root, &b.folded, scale_of(b), true);
    svg(&root, true, caption)
}

/// The folded HTML under a claim or a comparison: the functions that differ most, then the two
/// flame graphs and the differential one.
pub fn why_html(a: &ServerProfile, b: &ServerProfile, diffs: &[FunctionDiff]) -> String {
    let mut h = format!(
        "<table class=\"counters\"><tr><th>server function (self µs/op, perf)</th><th>a</th><th>b</th><th>b−a</th></tr><tr><td><i>all (server CPU by perf)</i></td><td>{:.2}</td><td>{:.2}</td><td>{:+.2}</td></tr>",
        a.cpu_us_per_op,
        b.cpu_us_per_op,
        b.cpu_us_per_op - a.cpu_us_per_op
    );
    // Where perf saw less of one side's CPU than the other, its functions look cheaper by that
    // much (docs/profile.md, "How much of the CPU it sees").
    h.push_str(&format!(
        "<tr><td><i>of the server's CPU in /proc</i></td><td>{}</td><td>{}</td><td></td></tr>",
        profile::coverage_text(a),
        profile::coverage_text(b)
    ));
    for f in diffs {
        h.push_str(&format!(
            "<tr><td>{}</td><td>{:.2}</td><td>{:.2}</td><td>{:+.2}</td></tr>",
            escape(&f.name),
            f.a_us_per_op,
            f.b_us_per_op,
            f.b_us_per_op - f.a_us_per_op
        ));
    }
    h.push_str("</table>");
    let shares = |p: &ServerProfile| {
        format!(
            "kernel {:.0} %, locks {:.0} %, I/O {:.0} %, network {:.0} %, engine {:.0} %, unresolved {:.0} %",
            100.0 * p.kernel_share,
            100.0 * p.lock_share,
            100.0 * p.io_share,
            100.0 * p.network_share,
            100.0 * p.engine_share,
            100.0 * p.unresolved_share
        )
    };
    h.push_str(&format!(
        "<p>a: {}<br>b: {}</p><details><summary>flame graphs (a, b, and b against a: red where b spends more)</summary>{}{}{}</details>",
        shares(a),
        shares(b),
        flame_svg(a, "a"),
        flame_svg(b, "b"),
        diff_svg(a, b, "b against a (width: the larger; red: more in b, blue: less)")
    ));
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prof(stacks: &[(&str, u64)], us: f64) -> ServerProfile {
        ServerProfile {
            cpu_us_per_op: us,
            folded: stacks
                .iter()
                .map(|(s, n)| FoldedStack {
                    stack: s.to_string(),
                    samples: *n,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn flame_is_plain_svg_with_titles() {
        let p = prof(&[("main;parse", 3), ("main;exec;read", 1)], 40.0);
        let s = flame_svg(&p, "a <b>");
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(!s.contains("<script"));
        assert!(
            s.contains("<title>parse: 30.00 µs/op (75.0 %)</title>"),
            "{s}"
        );
        assert!(s.contains("a &lt;b&gt;"));
        let d = diff_svg(
            &p,
            &prof(&[("main;parse", 1), ("main;exec;read", 3)], 40.0),
            "d",
        );
        assert!(
            d.contains("<title>read: A 10.00 µs/op, B 30.00 µs/op (+20.00)</title>"),
            "{d}"
        );
    }
}
