//! The workload file as serde reads it: raw definitions with their spans, before any check.

use super::*;

/// A map that keeps the file's order (tables load in order; columns keep their order).
#[derive(Debug)]
pub struct Ordered<T>(pub Vec<(String, T)>);

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = m.next_entry::<String, T>()? {
                    v.push((k, x));
                }
                Ok(Ordered(v))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileDef {
    pub(super) name: Spanned<String>,
    #[serde(default)]
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) dataset: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) notes: Vec<String>,
    #[serde(default)]
    pub(super) vars: Ordered<Spanned<i64>>,
    #[serde(default)]
    pub(super) tables: Ordered<Spanned<TableDef>>,
    #[serde(default)]
    pub(super) transactions: Ordered<Spanned<TxnDef>>,
    #[serde(default)]
    pub(super) phases: Vec<Spanned<PhaseDef>>,
}

/// An integer or an expression string.
#[derive(Debug, Clone)]
pub(super) struct ExprSrc(pub(super) String);

impl<'de> Deserialize<'de> for ExprSrc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ExprSrc;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an integer or an expression string such as \"100000 * scale\"")
            }
            fn visit_i64<E>(self, v: i64) -> Result<ExprSrc, E> {
                Ok(ExprSrc(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<ExprSrc, E> {
                Ok(ExprSrc(v.to_string()))
            }
            fn visit_str<E>(self, v: &str) -> Result<ExprSrc, E> {
                Ok(ExprSrc(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TableDef {
    pub(super) rows: Spanned<ExprSrc>,
    pub(super) columns: Ordered<Spanned<GenDef>>,
    #[serde(default)]
    pub(super) primary_key: Vec<String>,
    #[serde(default)]
    pub(super) indexes: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) ddl: Option<Spanned<DdlDef>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DdlDef {
    pub(super) mysql: Option<String>,
    pub(super) postgres: Option<String>,
    pub(super) sqlite: Option<String>,
}

/// A generator, for a column (with `type`) or a parameter. One flat table: which keys apply
/// depends on `kind` and is checked after parsing (so the error can say so).
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct GenDef {
    #[serde(rename = "type")]
    pub(super) ty: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) min: Option<toml::Value>,
    pub(super) max: Option<toml::Value>,
    pub(super) theta: Option<f64>,
    pub(super) scrambled: Option<bool>,
    pub(super) mean: Option<f64>,
    pub(super) stddev: Option<f64>,
    pub(super) a: Option<ExprSrc>,
    pub(super) c: Option<ExprSrc>,
    pub(super) len: Option<ExprSrc>,
    pub(super) min_len: Option<ExprSrc>,
    pub(super) max_len: Option<ExprSrc>,
    pub(super) values: Option<Vec<toml::Value>>,
    pub(super) weights: Option<Vec<u64>>,
    pub(super) table: Option<String>,
    pub(super) order: Option<String>,
    pub(super) start: Option<ExprSrc>,
    pub(super) value: Option<toml::Value>,
    pub(super) format: Option<String>,
    pub(super) hash: Option<bool>,
    pub(super) inline: Option<bool>,
}

impl GenDef {
    pub(super) fn present(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        macro_rules! p {
            ($($f:ident => $n:literal),*) => { $( if self.$f.is_some() { v.push($n); } )* };
        }
        p!(min => "min", max => "max", theta => "theta", scrambled => "scrambled", mean => "mean",
           stddev => "stddev", a => "a", c => "c", len => "len", min_len => "min_len",
           max_len => "max_len", values => "values", weights => "weights", table => "table",
           order => "order", start => "start", value => "value", format => "format",
           hash => "hash", inline => "inline");
        v
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TxnDef {
    #[serde(default)]
    pub(super) weight: Option<u32>,
    #[serde(default)]
    pub(super) transaction: Option<bool>,
    #[serde(default)]
    pub(super) pipeline: Option<bool>,
    #[serde(default)]
    pub(super) params: Ordered<Spanned<GenDef>>,
    pub(super) statements: Vec<Spanned<StmtDef>>,
    #[serde(default)]
    pub(super) retry: Option<Spanned<RetryDef>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StmtDef {
    pub(super) sql: Spanned<String>,
    #[serde(default)]
    pub(super) capture: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RetryDef {
    pub(super) on: Option<Vec<String>>,
    pub(super) max: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PhaseDef {
    pub(super) name: Option<Spanned<String>>,
    pub(super) duration: Option<Spanned<String>>,
    pub(super) rate: Option<Spanned<f64>>,
    pub(super) weights: Option<Spanned<Ordered<u32>>>,
}
