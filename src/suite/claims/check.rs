//! A claim checked against its plan when the plan is read: its section, its servers, its
//! band, the cells each side selects.

use super::*;

impl Claim {
    pub(super) fn section_index(&self, plan: &Plan) -> Result<usize, String> {
        match &self.section {
            Some(n) => plan
                .sections
                .iter()
                .position(|s| &s.name == n || s.workload == *n)
                .ok_or_else(|| format!("no section is named '{n}'")),
            None if plan.sections.len() == 1 => Ok(0),
            None => Err("the plan has several sections: name one with `section`".into()),
        }
    }

    /// Why the claim cannot be measured with this plan's servers, if so.
    pub(super) fn missing_server(&self, plan: &Plan) -> Option<String> {
        let n = self.needs_server.as_ref()?;
        (!plan.servers.iter().any(|s| s.name() == *n)).then(|| {
            format!(
                "needs a server named '{n}': add it to [[servers]] (url = \"...\", name = \"{n}\")"
            )
        })
    }

    /// The band a/b must lie in for the size to hold, and how it was derived.
    pub fn band(&self) -> Option<([Option<f64>; 2], String)> {
        if let Some(f) = self.figure_ratio {
            let (lo, hi) = f.bounds();
            let tol = self.tolerance.unwrap_or(0.0);
            let from = if lo == hi {
                format!("the report's {lo:.3}")
            } else {
                format!("the report's {lo:.3} to {hi:.3}")
            };
            return Some((
                [Some(lo / (1.0 + tol)), Some(hi * (1.0 + tol))],
                format!(
                    "{from}, ×/÷ {:.2} (tolerance {:.0} %)",
                    1.0 + tol,
                    tol * 100.0
                ),
            ));
        }
        if self.min_ratio.is_some() || self.max_ratio.is_some() {
            return Some((
                [self.min_ratio, self.max_ratio],
                "stated in the plan".to_string(),
            ));
        }
        None
    }

    /// The thread counts compared.
    pub(super) fn thread_counts(&self, plan: &Plan, si: usize) -> Vec<usize> {
        if !self.threads.is_empty() {
            return self.threads.clone();
        }
        match (self.a.threads, self.b.threads) {
            (Some(t), _) | (None, Some(t)) => vec![t],
            (None, None) => plan.sections[si].threads.clone(),
        }
    }

    /// Checked when the plan is read: the section, the metric, the expectation, and that each
    /// side selects exactly one cell at each compared thread count.
    pub fn validate(
        &self,
        plan: &Plan,
        cells: &[Cell],
        owners: Owners,
        check_cells: bool,
    ) -> Result<(), String> {
        let si = self.section_index(plan)?;
        for m in [&self.metric]
            .into_iter()
            .chain(self.a.metric.as_ref())
            .chain(self.b.metric.as_ref())
            .chain(self.a.per_metric.as_ref())
            .chain(self.b.per_metric.as_ref())
        {
            if !known_metric(m, owners) {
                return Err(format!(
                    "unknown metric '{m}' (metrics: {})",
                    metric_names(owners).join(", ")
                ));
            }
        }
        if !["a > b", "a < b", "a ~ b"].contains(&self.expect.as_str()) {
            return Err(format!(
                "expect = '{}': use \"a > b\", \"a < b\" or \"a ~ b\"",
                self.expect
            ));
        }
        if self.expect == "a ~ b" && self.band().is_none() {
            return Err(
                "expect = \"a ~ b\" needs a band (min_ratio and max_ratio, or figure_ratio with a tolerance): equality is decided against it"
                    .into(),
            );
        }
        if let Some(t) = self.tolerance {
            if !(0.0..=10.0).contains(&t) || self.figure_ratio.is_none() {
                return Err(format!(
                    "tolerance = {t}: a factor from 0 to 10 that widens figure_ratio (which the claim must have)"
                ));
            }
        }
        if let Some(FigureRatio::One(x) | FigureRatio::Range([x, _])) = self.figure_ratio {
            if x <= 0.0 {
                return Err(format!("figure_ratio {x}: a ratio a/b above 0"));
            }
        }
        if !check_cells || self.missing_server(plan).is_some() {
            return Ok(());
        }
        for t in self.thread_counts(plan, si) {
            for (side, sel) in [("a", &self.a), ("b", &self.b)] {
                if sel.value.is_some() {
                    continue;
                }
                select(plan, cells, si, sel, t).map_err(|e| format!("{side}: {e}"))?;
                if let Some(pt) = sel.per_threads {
                    let base = Selector {
                        threads: Some(pt),
                        ..sel.clone()
                    };
                    select(plan, cells, si, &base, pt)
                        .map_err(|e| format!("{side} per_threads: {e}"))?;
                }
            }
        }
        Ok(())
    }

    /// The cells one side reads at thread count `t`: the selected cell, and the base cell
    /// of `per_threads`.
    pub(super) fn cells_of<'c>(
        &self,
        plan: &Plan,
        cells: &'c [Cell],
        si: usize,
        sel: &Selector,
        t: usize,
    ) -> Result<Vec<&'c Cell>, String> {
        let mut out = vec![select(plan, cells, si, sel, t)?];
        if let Some(pt) = sel.per_threads {
            let base = Selector {
                threads: Some(pt),
                ..sel.clone()
            };
            out.push(select(plan, cells, si, &base, pt)?);
        }
        Ok(out)
    }

    /// Every cell the claim compares (both sides, every thread count), as far as the plan
    /// has them: what another pass must measure again to decide it.
    pub fn cells_compared<'c>(&self, plan: &Plan, cells: &'c [Cell]) -> Vec<&'c Cell> {
        let Ok(si) = self.section_index(plan) else {
            return Vec::new();
        };
        let mut out: Vec<&Cell> = Vec::new();
        for t in self.thread_counts(plan, si) {
            for sel in [&self.a, &self.b] {
                if sel.value.is_some() {
                    continue;
                }
                for c in self.cells_of(plan, cells, si, sel, t).unwrap_or_default() {
                    if !out.iter().any(|x| x.name == c.name) {
                        out.push(c);
                    }
                }
            }
        }
        out
    }

    /// Why the claim cannot be decided with these results, if so (`needs`).
    pub(super) fn undecidable(&self, docs: &[&ResultDoc], threads: &[usize]) -> Option<String> {
        let needs = self.needs.as_ref()?;
        let why = needs
            .why
            .as_deref()
            .map(|w| format!(" ({w})"))
            .unwrap_or_default();
        if let Some(c) = needs.cores {
            let have = docs.iter().map(|d| d.host.cores).max().unwrap_or(0);
            if have > 0 && have < c {
                return Some(format!(
                    "needs at least {c} cores, this host has {have}{why}"
                ));
            }
        }
        for (k, min) in &needs.config_min {
            for d in docs {
                if let Some(v) = config_number(&d.config, k) {
                    if v < *min {
                        return Some(format!(
                            "needs {k} of at least {min}, the cells have {v}{why}"
                        ));
                    }
                }
            }
        }
        let most = threads.iter().copied().max().unwrap_or(1).max(1) as f64;
        for (k, min) in &needs.config_per_thread {
            for d in docs {
                if let Some(v) = config_number(&d.config, k) {
                    if v / most < *min {
                        return Some(format!(
                            "needs {k} of at least {min} per connection, the cells have {v} for {most} connections{why}"
                        ));
                    }
                }
            }
        }
        None
    }
}
