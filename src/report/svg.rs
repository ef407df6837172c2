//! Inline SVG charts (no script, no external resource): line charts with titled, labelled axes,
//! a legend, and log scales where a range spans decades. Every plotted point is a
//! `<circle class="pt">` with a `<title>` tooltip, so a reader can hover for exact values.

use std::fmt::Write;

pub use crate::model::Series;

// The page sets charts side by side in a grid (about three per row on a laptop, one on a
// phone) and scales each to its cell's width: a chart is drawn for about 480 px, with its
// legend under the plot so the plot keeps the width.
const W: f64 = 480.0;
const LEFT: f64 = 62.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 32.0;
/// Plot height.
const PH: f64 = 190.0;
/// Below the plot: tick labels and the x axis label.
const AXIS: f64 = 44.0;
const LEGEND_ROW: f64 = 18.0;
/// Title characters kept (14 px text across the chart's width).
const TITLE_CHARS: usize = 60;

/// Colour-blind-safe palette (Okabe-Ito), then four of Paul Tol's muted colours so that a
/// workload of ten request types gets ten colours.
pub const COLORS: [&str; 12] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
    "#882255", "#44AA99", "#999933", "#AA4499",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Base-2 log: thread counts 1, 4, 16, 64, ...
    Log2,
    /// Base-10 log: latencies spanning decades.
    Log10,
}

#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub series: Vec<Series>,
}

/// Choose log10 for a positive range spanning more than two decades, else linear.
pub fn auto_scale(values: impl Iterator<Item = f64>) -> Scale {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in values {
        if v > 0.0 {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    if lo.is_finite() && hi / lo > 100.0 {
        Scale::Log10
    } else {
        Scale::Linear
    }
}

struct Axis {
    scale: Scale,
    lo: f64,
    hi: f64,
}

impl Axis {
    fn new(scale: Scale, values: &[f64]) -> Axis {
        let pos: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && (*v > 0.0 || scale == Scale::Linear))
            .collect();
        let min = pos.iter().copied().fold(f64::INFINITY, f64::min);
        let max = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (min, max) = if pos.is_empty() {
            (0.0, 1.0)
        } else {
            (min, max)
        };
        match scale {
            Scale::Linear => {
                let lo = if min >= 0.0 { 0.0 } else { min };
                let hi = if max <= lo { lo + 1.0 } else { max * 1.05 };
                let step = nice_step((hi - lo) / 5.0);
                Axis {
                    scale,
                    lo,
                    hi: (hi / step).ceil() * step,
                }
            }
            Scale::Log2 => Axis {
                scale,
                lo: min.max(1e-9).log2().floor(),
                hi: max
                    .max(1e-9)
                    .log2()
                    .ceil()
                    .max(min.max(1e-9).log2().floor() + 1.0),
            },
            Scale::Log10 => Axis {
                scale,
                lo: min.max(1e-9).log10().floor(),
                hi: max
                    .max(1e-9)
                    .log10()
                    .ceil()
                    .max(min.max(1e-9).log10().floor() + 1.0),
            },
        }
    }

    /// Position of `v` in 0..1 along the axis.
    fn frac(&self, v: f64) -> f64 {
        let t = match self.scale {
            Scale::Linear => v,
            Scale::Log2 => v.max(1e-9).log2(),
            Scale::Log10 => v.max(1e-9).log10(),
        };
        ((t - self.lo) / (self.hi - self.lo)).clamp(0.0, 1.0)
    }

    fn ticks(&self) -> Vec<f64> {
        match self.scale {
            Scale::Linear => {
                let step = nice_step((self.hi - self.lo) / 5.0);
                let mut v = (self.lo / step).ceil() * step;
                let mut out = Vec::new();
                while v <= self.hi + step * 1e-9 {
                    out.push(v);
                    v += step;
                }
                out
            }
            Scale::Log2 => {
                let every = ((self.hi - self.lo) / 8.0).ceil().max(1.0) as i32;
                (self.lo as i32..=self.hi as i32)
                    .step_by(every as usize)
                    .map(|e| 2f64.powi(e))
                    .collect()
            }
            Scale::Log10 => (self.lo as i32..=self.hi as i32)
                .map(|e| 10f64.powi(e))
                .collect(),
        }
    }
}

pub(super) fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    mag * if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }
}

/// Short number for tick labels: 1500 → 1.5k, 2000000 → 2M, 0.25 → 0.25.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if x.fract().abs() < 1e-9 || x.abs() >= 10.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    };
    format!("{s}{suffix}")
}

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

impl Chart {
    pub fn to_svg(&self) -> String {
        let xs: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .collect();
        let ys: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .collect();
        let (xa, ya) = (Axis::new(self.x_scale, &xs), Axis::new(self.y_scale, &ys));
        let legend = legend_layout(self.series.iter().map(|s| s.name.as_str()));
        let rows = legend.last().map_or(0.0, |l| l.1 + 1.0);
        let h = (TOP + PH + AXIS + rows * LEGEND_ROW + 6.0).round();
        let (pw, ph) = (W - LEFT - RIGHT, PH);
        let px = |v: f64| LEFT + xa.frac(v) * pw;
        let py = |v: f64| TOP + (1.0 - ya.frac(v)) * ph;
        let mut s = String::with_capacity(4096);
        let _ = write!(
            s,
            r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" aria-label="{t}"><title>{t}</title>"#,
            t = escape(&self.title)
        );
        let _ = write!(
            s,
            r#"<text x="{}" y="20" class="ct">{}</text>"#,
            W / 2.0,
            escape(&truncate(&self.title, TITLE_CHARS))
        );
        // Grid and ticks.
        for t in ya.ticks() {
            let y = py(t);
            let _ = write!(
                s,
                r#"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" class="grid"/><text x="{:.1}" y="{:.1}" class="yt">{}</text>"#,
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                short(t)
            );
        }
        for t in xa.ticks() {
            let x = px(t);
            let _ = write!(
                s,
                r#"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" class="grid"/><text x="{x:.1}" y="{:.1}" class="xt">{}</text>"#,
                TOP + ph,
                TOP + ph + 16.0,
                short(t)
            );
        }
        let _ = write!(
            s,
            r#"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" class="frame"/>"#
        );
        let scale_note = |sc: Scale| match sc {
            Scale::Linear => "",
            Scale::Log2 => " (log scale)",
            Scale::Log10 => " (log scale)",
        };
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" class="xl">{}{}</text>"#,
            LEFT + pw / 2.0,
            TOP + ph + 36.0,
            escape(&self.x_label),
            scale_note(self.x_scale)
        );
        let _ = write!(
            s,
            r#"<text transform="translate(16,{:.1}) rotate(-90)" class="yl">{}{}</text>"#,
            TOP + ph / 2.0,
            escape(&self.y_label),
            scale_note(self.y_scale)
        );
        for (i, ser) in self.series.iter().enumerate() {
            let c = COLORS[i % COLORS.len()];
            let pts: Vec<String> = ser
                .points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            if pts.len() > 1 {
                let _ = write!(
                    s,
                    r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"/>"#,
                    pts.join(" ")
                );
            }
            // One fill for the series' points (it saves 10 % of a suite's page).
            let _ = write!(s, r#"<g fill="{c}">"#);
            for &(x, y) in &ser.points {
                let _ = write!(
                    s,
                    r#"<circle class="pt" cx="{:.1}" cy="{:.1}" r="3"><title>{}: {} = {}, {} = {}</title></circle>"#,
                    px(x),
                    py(y),
                    escape(&ser.name),
                    escape(&self.x_label),
                    short(x),
                    escape(&self.y_label),
                    short(y)
                );
            }
            s.push_str("</g>");
            let (lx, row) = legend[i];
            let ly = TOP + ph + AXIS + 12.0 + row * LEGEND_ROW;
            let _ = write!(
                s,
                r#"<rect x="{lx:.1}" y="{:.1}" width="12" height="12" fill="{c}"/><text x="{:.1}" y="{ly:.1}" class="lg">{}</text>"#,
                ly - 10.0,
                lx + 16.0,
                escape(&truncate(&ser.name, LEGEND_CHARS))
            );
        }
        s.push_str("</svg>");
        s
    }
}

/// Legend names are cut to this many characters.
const LEGEND_CHARS: usize = 22;

/// Where each legend entry goes: (x, row), entries flowing left to right in rows under the
/// plot. Widths are estimated from the name's length (12 px text: about 6.6 px a character).
fn legend_layout<'a>(names: impl Iterator<Item = &'a str>) -> Vec<(f64, f64)> {
    let (mut x, mut row) = (LEFT, 0.0);
    let mut out = Vec::new();
    for n in names {
        let w = 16.0 + n.chars().count().min(LEGEND_CHARS) as f64 * 6.6 + 14.0;
        if x > LEFT && x + w > W - RIGHT {
            x = LEFT;
            row += 1.0;
        }
        out.push((x, row));
        x += w;
    }
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers() {
        assert_eq!(short(1500.0), "1.5k");
        assert_eq!(short(2_000_000.0), "2M");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(64.0), "64");
    }

    #[test]
    fn svg_has_one_circle_per_point_and_labels() {
        let c = Chart {
            title: "READ_PK_POINT".into(),
            x_label: "threads".into(),
            y_label: "ops/s".into(),
            x_scale: Scale::Log2,
            y_scale: Scale::Linear,
            series: vec![Series {
                name: "InnoDB".into(),
                points: vec![(1.0, 10.0), (4.0, 40.0), (16.0, 50.0)],
            }],
        };
        let svg = c.to_svg();
        assert_eq!(svg.matches(r#"class="pt""#).count(), 3);
        assert!(
            svg.contains("threads (log scale)")
                && svg.contains(">ops/s<")
                && svg.contains(">InnoDB<")
        );
        assert_eq!(auto_scale([1.0, 5000.0].into_iter()), Scale::Log10);
        // A legend of many series flows into rows under the plot; the chart grows to fit.
        let many = Chart {
            series: (0..10)
                .map(|i| Series {
                    name: format!("request type {i}"),
                    points: vec![(1.0, 1.0)],
                })
                .collect(),
            ..c.clone()
        };
        let rows = legend_layout(many.series.iter().map(|s| s.name.as_str()));
        assert!(rows.iter().all(|(x, _)| *x >= LEFT && *x < W - RIGHT));
        assert!(rows.last().unwrap().1 >= 2.0, "{rows:?}");
        assert!(many.to_svg().contains(&format!(
            "height=\"{}\"",
            TOP + PH + AXIS + (rows.last().unwrap().1 + 1.0) * LEGEND_ROW + 6.0
        )));
        assert_eq!(auto_scale([100.0, 500.0].into_iter()), Scale::Linear);
    }
}
