//! Generator resolution: one `kind = ...` table of a workload file (a loaded column or a
//! transaction parameter) checked and turned into a generator, its output format and, for an
//! inline choice, the texts written into the SQL.

use super::*;

/// Every kind, as errors list them.
const KINDS: &str =
    "sequence, uniform, zipf, latest, next_key, gaussian, nurand, const, null, string, date, choice, fk";

/// A generator table, with where it is and what it can see.
struct Def<'a> {
    d: &'a GenDef,
    span: Range<usize>,
    path: &'a str,
    cx: &'a Ctx<'a>,
    kind: &'a str,
}

pub(super) fn resolve_gen(
    def: &Spanned<GenDef>,
    path: &str,
    cx: &Ctx,
) -> Result<(Gen, Format, Option<Vec<String>>), String> {
    let d = def.get_ref();
    let Some(kind) = d.kind.as_deref() else {
        return Err(cx
            .loc
            .err(&def.span(), path, format!("missing `kind` ({KINDS})")));
    };
    let g = Def {
        d,
        span: def.span(),
        path,
        cx,
        kind,
    };
    g.check_keys()?;
    let theta = d.theta.unwrap_or(gen::YCSB_THETA);
    if !(theta > 0.0 && theta < 1.0) && d.theta.is_some() {
        return Err(g.bad(format!(
            "`theta` must be between 0 and 1 (exclusive), not {theta}"
        )));
    }
    let mut inline = None;
    let gen = match g.kind {
        "sequence" => Gen::Sequence {
            start: match &d.start {
                Some(s) => g.ev("`start`", &s.0)?,
                None => 1,
            },
        },
        "uniform" => {
            let (min, max) = g.bounds()?;
            Gen::Uniform { min, max }
        }
        "zipf" => g.zipf(theta)?,
        "latest" => {
            let (i, t) = g.table_of(&d.table)?;
            g.key_start(t)?;
            Gen::Latest { table: i, theta }
        }
        "next_key" => {
            let (i, t) = g.table_of(&d.table)?;
            g.key_start(t)?;
            Gen::NextKey { table: i }
        }
        "gaussian" => g.gaussian()?,
        "nurand" => g.nurand()?,
        "const" => {
            let v = d
                .value
                .as_ref()
                .ok_or_else(|| g.bad("kind `const` needs `value`".into()))?;
            Gen::Const(
                literal(v).ok_or_else(|| g.bad("`value` must be an integer or a string".into()))?,
            )
        }
        "null" => Gen::Const(Value::Null),
        "string" => g.string()?,
        "date" => g.date()?,
        "choice" => {
            let (gen, texts) = g.choice()?;
            inline = texts;
            gen
        }
        "fk" => g.fk()?,
        _ => unreachable!("kinds are checked above"),
    };
    Ok((gen, g.format()?, inline))
}

impl<'a> Def<'a> {
    fn bad(&self, msg: String) -> String {
        self.cx.loc.err(&self.span, self.path, msg)
    }

    /// A transaction parameter (not a loaded column).
    fn is_param(&self) -> bool {
        self.cx.own_rows.is_none()
    }

    /// Its kind is known, and every key it gives applies to it (and to a column or a
    /// parameter, whichever it is).
    fn check_keys(&self) -> Result<(), String> {
        let (d, kind, is_param) = (self.d, self.kind, self.is_param());
        let allowed: &[&str] = match kind {
            "sequence" => &["start"],
            "uniform" => &["min", "max"],
            "zipf" => &["min", "max", "theta", "scrambled"],
            "latest" => &["table", "theta"],
            "next_key" => &["table"],
            "gaussian" => &["min", "max", "mean", "stddev"],
            "nurand" => &["a", "min", "max", "c"],
            "const" => &["value"],
            "null" => &[],
            "string" => &["len", "min_len", "max_len"],
            "date" => &["min", "max"],
            "choice" => &["values", "weights", "inline"],
            "fk" => &["table", "order"],
            other => return Err(self.bad(format!("unknown kind `{other}` ({KINDS})"))),
        };
        let int_kind = matches!(
            kind,
            "sequence" | "uniform" | "zipf" | "latest" | "next_key" | "gaussian" | "nurand" | "fk"
        );
        for f in d.present() {
            let common = (f == "format" || f == "hash") && int_kind;
            if !allowed.contains(&f) && !common {
                return Err(self.bad(format!("`{f}` does not apply to kind `{kind}`")));
            }
        }
        match (kind, is_param) {
            ("sequence", true) => return Err(self.bad(
                "kind `sequence` numbers loaded rows; for new keys in a transaction use `next_key`"
                    .into(),
            )),
            ("latest" | "next_key", false) => {
                return Err(self.bad(format!(
                    "kind `{kind}` is for transaction parameters, not loaded columns"
                )))
            }
            _ => {}
        }
        if d.inline.is_some() && is_param && kind != "choice" {
            return Err(self.bad("`inline` applies to kind `choice` only".into()));
        }
        if d.inline.is_some() && !is_param {
            return Err(self.bad("`inline` applies to transaction parameters only".into()));
        }
        Ok(())
    }

    fn ev(&self, what: &str, src: &str) -> Result<i64, String> {
        super::super::expr::eval(src, self.cx.vars).map_err(|e| self.bad(format!("{what}: {e}")))
    }

    fn ev_opt(&self, what: &str, v: &Option<toml::Value>) -> Result<Option<i64>, String> {
        match v {
            None => Ok(None),
            Some(v) => {
                let s = num(v).ok_or_else(|| {
                    self.bad(format!(
                        "`{what}` must be an integer or an expression string"
                    ))
                })?;
                self.ev(&format!("`{what}`"), &s).map(Some)
            }
        }
    }

    fn need(&self, what: &str, v: Option<i64>) -> Result<i64, String> {
        v.ok_or_else(|| self.bad(format!("kind `{}` needs `{what}`", self.kind)))
    }

    fn bounds(&self) -> Result<(i64, i64), String> {
        let min = self.need("min", self.ev_opt("min", &self.d.min)?)?;
        let max = self.need("max", self.ev_opt("max", &self.d.max)?)?;
        if min > max {
            return Err(self.bad(format!("`min` ({min}) is above `max` ({max})")));
        }
        Ok((min, max))
    }

    fn table_of(&self, name: &Option<String>) -> Result<(usize, &'a Table), String> {
        let name = name
            .as_deref()
            .ok_or_else(|| self.bad(format!("kind `{}` needs `table`", self.kind)))?;
        self.cx
            .tables
            .iter()
            .enumerate()
            .find(|(_, t)| t.name == name)
            .ok_or_else(|| {
                self.bad(format!(
                    "unknown table `{name}` (a foreign key or key generator names a table defined before it; known: {})",
                    self.cx.tables.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
                ))
            })
    }

    fn key_start(&self, t: &Table) -> Result<i64, String> {
        t.key_start.ok_or_else(|| {
            self.bad(format!(
                "table `{}` has no `sequence` column, so its keys are unknown",
                t.name
            ))
        })
    }

    fn zipf(&self, theta: f64) -> Result<Gen, String> {
        let d = self.d;
        let (min, max) = self.bounds()?;
        let n = (max - min + 1) as u64;
        if d.scrambled == Some(true) {
            if d.theta.is_some_and(|t| t != gen::YCSB_THETA) {
                return Err(
                    self.bad("`scrambled` uses YCSB's fixed theta 0.99; leave `theta` out".into())
                );
            }
            Ok(gen::scrambled_zipf(min, n))
        } else {
            Ok(Gen::Zipf {
                min,
                n,
                zipf: Box::new(Zipf::new(n, theta)),
                scrambled: false,
            })
        }
    }

    fn gaussian(&self) -> Result<Gen, String> {
        let d = self.d;
        let (min, max) = self.bounds()?;
        let mean = d.mean.unwrap_or((min + max) as f64 / 2.0);
        let stddev = d.stddev.unwrap_or((max - min) as f64 / 6.0);
        if stddev <= 0.0 && max > min {
            return Err(self.bad("`stddev` must be positive".into()));
        }
        Ok(Gen::Gaussian {
            min,
            max,
            mean,
            stddev,
        })
    }

    fn nurand(&self) -> Result<Gen, String> {
        let d = self.d;
        let (min, max) = self.bounds()?;
        let a = match &d.a {
            Some(a) => self.ev("`a`", &a.0)?,
            None => {
                return Err(self.bad("kind `nurand` needs `a` (TPC-C: 255, 1023 or 8191)".into()))
            }
        };
        if a < 0 {
            return Err(self.bad("`a` must not be negative".into()));
        }
        let c = match &d.c {
            Some(c) => self.ev("`c`", &c.0)?,
            // TPC-C 2.1.6: C is a run-time constant in 0..=A, here drawn from the seed.
            None => crate::rng::Rng::keyed(self.cx.seed, 0xC0, a as u64).range(0, a as u64) as i64,
        };
        Ok(Gen::NuRand { a, min, max, c })
    }

    fn string(&self) -> Result<Gen, String> {
        let d = self.d;
        let (lo, hi) = match (&d.len, &d.min_len, &d.max_len) {
            (Some(l), None, None) => {
                let l = self.ev("`len`", &l.0)?;
                (l, l)
            }
            (None, Some(a), Some(b)) => (self.ev("`min_len`", &a.0)?, self.ev("`max_len`", &b.0)?),
            _ => {
                return Err(self.bad("kind `string` needs `len`, or `min_len` and `max_len`".into()))
            }
        };
        if lo < 0 || lo > hi || hi > 1 << 24 {
            return Err(self.bad(format!(
                "string lengths {lo}..{hi} are not a range within 0..16777216"
            )));
        }
        Ok(Gen::Text {
            min_len: lo as usize,
            max_len: hi as usize,
            text: None,
        })
    }

    fn date(&self) -> Result<Gen, String> {
        let day = |what: &str, v: &Option<toml::Value>| -> Result<i64, String> {
            let s = match v {
                Some(toml::Value::String(s)) => s.clone(),
                Some(toml::Value::Datetime(dt)) => dt.to_string(),
                Some(_) => {
                    return Err(self.bad(format!("`{what}` must be a date such as 2024-01-31")))
                }
                None => return Err(self.bad(format!("kind `date` needs `{what}`"))),
            };
            gen::parse_date(&s)
                .ok_or_else(|| self.bad(format!("`{what}`: `{s}` is not a date (YYYY-MM-DD)")))
        };
        let (min_day, max_day) = (day("min", &self.d.min)?, day("max", &self.d.max)?);
        if min_day > max_day {
            return Err(self.bad("`min` is after `max`".into()));
        }
        Ok(Gen::Date { min_day, max_day })
    }

    /// The choice, and for an inline one the texts written into the SQL.
    fn choice(&self) -> Result<(Gen, Option<Vec<String>>), String> {
        let d = self.d;
        let raw = d
            .values
            .as_ref()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| self.bad("kind `choice` needs a non-empty `values` list".into()))?;
        let values = raw
            .iter()
            .map(|v| {
                literal(v).ok_or_else(|| self.bad("`values` must be integers or strings".into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let cum = match &d.weights {
            None => Vec::new(),
            Some(w) => {
                if w.len() != values.len() {
                    return Err(self.bad(format!(
                        "`weights` has {} entries for {} values",
                        w.len(),
                        values.len()
                    )));
                }
                let mut acc = 0u64;
                let cum: Vec<u64> = w
                    .iter()
                    .map(|x| {
                        acc += x;
                        acc
                    })
                    .collect();
                if acc == 0 {
                    return Err(self.bad("`weights` are all 0".into()));
                }
                cum
            }
        };
        let mut inline = None;
        if d.inline == Some(true) {
            let texts = values
                .iter()
                .map(|v| match v {
                    Value::Int(i) => Ok(i.to_string()),
                    Value::Text(t) if is_ident(t) => Ok(t.clone()),
                    _ => Err(self.bad(
                        "inline `values` must be integers or identifiers (they are written into the SQL)".into(),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?;
            if texts.len() > 64 {
                return Err(self.bad(
                    "an inline choice has at most 64 values (one prepared statement each)".into(),
                ));
            }
            inline = Some(texts);
        }
        Ok((Gen::Choice { values, cum }, inline))
    }

    fn fk(&self) -> Result<Gen, String> {
        let (_, t) = self.table_of(&self.d.table)?;
        let start = self.key_start(t)?;
        if t.rows == 0 {
            return Err(self.bad(format!("table `{}` has no rows to refer to", t.name)));
        }
        let spread = match self.d.order.as_deref() {
            None | Some("random") => false,
            Some("spread") if !self.is_param() => true,
            Some("spread") => {
                return Err(self.bad("`order = \"spread\"` applies to loaded columns only".into()))
            }
            Some(o) => return Err(self.bad(format!("unknown `order` `{o}` (random or spread)"))),
        };
        Ok(Gen::Fk {
            start,
            rows: t.rows as i64,
            spread,
            own_rows: self.cx.own_rows.unwrap_or(1) as i64,
        })
    }

    /// How its integers are written: hashed, and within a `format`'s text.
    fn format(&self) -> Result<Format, String> {
        let mut fmt = Format {
            hash: self.d.hash == Some(true),
            ..Format::default()
        };
        if let Some(f) = &self.d.format {
            let (p, s) = f
                .split_once("{}")
                .filter(|(_, s)| !s.contains("{}"))
                .ok_or_else(|| {
                    self.bad(format!(
                        "`format` must hold `{{}}` once (e.g. \"user{{}}\"), not `{f}`"
                    ))
                })?;
            fmt.prefix = p.to_string();
            fmt.suffix = s.to_string();
            fmt.text = true;
        }
        Ok(fmt)
    }
}
