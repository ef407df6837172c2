//! Inline SVG grouped bar charts (a section's per-category bars): categories along x, one bar
//! per series in each category, a titled value axis with its unit, a legend. Every bar is a
//! `<rect class="pt">` with a `<title>` tooltip, counted like the line charts' points.

use std::fmt::Write;

use super::svg::{escape, nice_step, short, COLORS};

const H: f64 = 320.0;
const LEFT: f64 = 74.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 34.0;
/// Room for category names written at a slant.
const BOTTOM: f64 = 96.0;

#[derive(Debug, Clone)]
pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    /// (series name, one value per category; None: no bar).
    pub series: Vec<(String, Vec<Option<f64>>)>,
    /// A dashed reference line (a ratio of 1.0, say), with its label.
    pub reference: Option<(f64, String)>,
}

impl BarChart {
    pub fn bar_count(&self) -> usize {
        self.series
            .iter()
            .map(|s| s.1.iter().flatten().count())
            .sum()
    }

    pub fn to_svg(&self) -> String {
        let n_cat = self.categories.len().max(1);
        let n_ser = self.series.len().max(1);
        // Wide enough for every bar to be at least 8 px, and at least 660 px with the legend.
        let pw = (n_cat * n_ser) as f64 * 10.0 + n_cat as f64 * 16.0;
        let pw = pw.max(660.0 - LEFT - RIGHT);
        let w = LEFT + pw + RIGHT;
        let ph = H - TOP - BOTTOM;
        let mut max = self
            .series
            .iter()
            .flat_map(|s| s.1.iter().flatten().copied())
            .fold(0.0f64, f64::max);
        if let Some((r, _)) = &self.reference {
            max = max.max(*r);
        }
        let step = nice_step(max / 5.0);
        let top = if max > 0.0 {
            (max / step).ceil() * step
        } else {
            1.0
        };
        let py = |v: f64| TOP + ph * (1.0 - (v / top).clamp(0.0, 1.0));
        // A chart of many bars takes two cells of the page's grid (on a wide enough screen).
        let wide = if w > 700.0 { " data-wide" } else { "" };
        let mut s = String::with_capacity(4096);
        let _ = write!(
            s,
            r#"<svg class="chart"{wide} xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {H}" width="{w}" height="{H}" role="img" aria-label="{t}"><title>{t}</title><text x="{:.1}" y="20" class="ct">{t}</text>"#,
            w / 2.0,
            t = escape(&self.title)
        );
        let mut v = 0.0;
        while v <= top + step * 1e-9 {
            let y = py(v);
            let _ = write!(
                s,
                r#"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" class="grid"/><text x="{:.1}" y="{:.1}" class="yt">{}</text>"#,
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                short(v)
            );
            v += step;
        }
        let _ = write!(
            s,
            r#"<rect x="{LEFT}" y="{TOP}" width="{pw:.1}" height="{ph}" class="frame"/><text transform="translate(16,{:.1}) rotate(-90)" class="yl">{}</text>"#,
            TOP + ph / 2.0,
            escape(&self.y_label)
        );
        let slot = pw / n_cat as f64;
        // Bars no wider than 48 px: a lone bar should not look like a filled panel.
        let bar = ((slot - 12.0) / n_ser as f64).min(48.0);
        for (ci, cat) in self.categories.iter().enumerate() {
            let x0 = LEFT + ci as f64 * slot + 6.0;
            for (si, (name, vals)) in self.series.iter().enumerate() {
                let Some(v) = vals.get(ci).copied().flatten() else {
                    continue;
                };
                let (y, x) = (py(v), x0 + si as f64 * bar);
                let _ = write!(
                    s,
                    r#"<rect class="pt" x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}, {}: {} {}</title></rect>"#,
                    (bar - 1.0).max(1.0),
                    (TOP + ph - y).max(0.5),
                    COLORS[si % COLORS.len()],
                    escape(name),
                    escape(cat),
                    short(v),
                    escape(&self.y_label)
                );
            }
            let cx = x0 + bar * n_ser as f64 / 2.0;
            let _ = write!(
                s,
                r#"<text transform="translate({cx:.1},{:.1}) rotate(-30)" class="yt">{}</text>"#,
                TOP + ph + 14.0,
                escape(&truncate(cat, 22))
            );
        }
        if let Some((r, label)) = &self.reference {
            let y = py(*r);
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#444" stroke-dasharray="5,4"/><text x="{:.1}" y="{:.1}" class="lg">{}</text>"##,
                LEFT + pw,
                LEFT + pw + 4.0,
                y + 4.0,
                escape(label)
            );
        }
        for (si, (name, _)) in self.series.iter().enumerate() {
            let ly = TOP + 28.0 + si as f64 * 18.0;
            let _ = write!(
                s,
                r#"<rect x="{:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{ly:.1}" class="lg">{}</text>"#,
                LEFT + pw + 10.0,
                ly - 10.0,
                COLORS[si % COLORS.len()],
                LEFT + pw + 26.0,
                escape(&truncate(name, 22))
            );
        }
        s.push_str("</svg>");
        s
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}
