//! Parsing a workload command (`enginebench SUB WORKLOAD [OPTIONS]`) over a list of entries:
//! the common options and the workload's own, and errors that name the workload an option
//! belongs to. The registry passes every known entry; a workload's own tests pass just theirs.

use clap::Args;

use super::Entry;
use crate::error::{Error, Result};

/// Every name the entries answer to, in `list` order.
pub fn names(reg: &[&'static dyn Entry]) -> Vec<&'static str> {
    reg.iter().flat_map(|e| e.names()).collect()
}

/// The entry that answers to `name`.
pub fn find(reg: &[&'static dyn Entry], name: &str) -> Option<&'static dyn Entry> {
    reg.iter().copied().find(|e| e.names().contains(&name))
}

/// A workload command, parsed: the registry entry, the name typed ("" for a workload file
/// given by --workload-file alone), the common options and every option's matches.
pub struct Parsed<A> {
    pub entry: &'static dyn Entry,
    pub name: String,
    pub common: A,
    pub matches: clap::ArgMatches,
}

/// Parse `enginebench SUB WORKLOAD [OPTIONS]`: the workload's own options and the common ones
/// `A`. `Ok(None)`: help was asked for and printed.
pub fn parse_workload<A: Args + clap::FromArgMatches>(
    reg: &[&'static dyn Entry],
    sub: &str,
    argv: &[String],
) -> Result<Option<Parsed<A>>> {
    let help = argv.iter().any(|a| a == "--help" || a == "-h");
    let (entry, name, rest) = match workload_position::<A>(reg, sub, argv) {
        Some(i) => {
            let n = &argv[i];
            let entry = find(reg, n).ok_or_else(|| {
                Error::usage(format!(
                    "unknown workload '{n}'; known workloads: {} (see `enginebench list`)",
                    names(reg).join(", ")
                ))
            })?;
            let mut rest = argv.to_vec();
            rest.remove(i);
            (entry, n.clone(), rest)
        }
        None => match reg.iter().find(|e| e.claims_unnamed(argv)) {
            Some(e) => (*e, String::new(), argv.to_vec()),
            None if help => {
                let mut cmd = workload_command::<A>(sub, "WORKLOAD")
                    .about(format!(
                        "The common options of `{sub}`; each workload adds its own."
                    ))
                    .after_help(if sub == "check" {
                        // Only some workloads have consistency conditions: name them and theirs.
                        let with: Vec<String> = reg
                            .iter()
                            .filter_map(|e| Some(format!("  {}: {}", e.names().join(", "), e.check_conditions()?)))
                            .collect();
                        format!("Workloads with consistency conditions (`enginebench check WORKLOAD --help` gives their options):\n{}", with.join("\n"))
                    } else {
                        format!(
                    "Workloads (`enginebench list` shows their operations; `enginebench {sub} WORKLOAD --help` their options):\n  {}",
                    names(reg).join(", "))
                    });
                let _ = cmd.print_help();
                return Ok(None);
            }
            None => {
                return Err(Error::usage(
                    "give a workload name (see `enginebench list`) or --workload-file FILE",
                ))
            }
        },
    };
    // The workload's line from `list` heads its help (an Args struct's doc comment would).
    let heading = entry.listing().heading;
    let cmd = entry
        .args(workload_command::<A>(sub, &name))
        .about(heading.split_whitespace().collect::<Vec<_>>().join(" "))
        .long_about(clap::builder::Resettable::Reset);
    let matches = match cmd.try_get_matches_from(&rest) {
        Ok(m) => m,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
            let _ = e.print();
            return Ok(None);
        }
        Err(e) => return Err(Error::usage(explain(reg, &name, &e))),
    };
    let common = A::from_arg_matches(&matches).map_err(|e| Error::usage(first_line(&e)))?;
    Ok(Some(Parsed {
        entry,
        name,
        common,
        matches,
    }))
}

/// Where the workload name stands in `argv`: the first word that is not an option or an
/// option's value (any workload's options are known, so `--threads 4 NAME` finds NAME).
fn workload_position<A: Args>(
    reg: &[&'static dyn Entry],
    sub: &str,
    argv: &[String],
) -> Option<usize> {
    let mut cmds = vec![workload_command::<A>(sub, "")];
    cmds.extend(reg.iter().map(|e| e.args(clap::Command::new("x"))));
    let takes_value = |word: &str| {
        cmds.iter().flat_map(|c| c.get_arguments()).any(|a| {
            let named = match word.strip_prefix("--") {
                Some(long) => {
                    a.get_long() == Some(long)
                        || a.get_all_aliases().is_some_and(|v| v.contains(&long))
                }
                // `-t URL`: a short option alone, its value in the next word.
                None => word.len() == 2 && word.chars().nth(1) == a.get_short(),
            };
            // An option whose value must follow `=` never takes the next word.
            named && a.get_action().takes_values() && !a.is_require_equals_set()
        })
    };
    let mut i = 0;
    while i < argv.len() {
        let w = argv[i].as_str();
        if w == "--" {
            return (i + 1 < argv.len()).then_some(i + 1);
        }
        if w.starts_with('-') && w.len() > 1 {
            i += if !w.contains('=') && takes_value(w) {
                2
            } else {
                1
            };
            continue;
        }
        return Some(i);
    }
    None
}

/// The command of one workload before its own options are added.
fn workload_command<A: Args>(sub: &str, name: &str) -> clap::Command {
    A::augment_args(
        clap::Command::new("enginebench")
            .bin_name(format!("enginebench {sub} {name}"))
            .no_binary_name(true)
            .max_term_width(100),
    )
}

/// A clap error in one line; an option that belongs to other workloads says which.
fn explain(reg: &[&'static dyn Entry], name: &str, e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() == ErrorKind::UnknownArgument {
        if let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) {
            let flag = arg.split('=').next().unwrap_or(arg);
            let long = flag.trim_start_matches("--");
            let owners: Vec<&str> = reg
                .iter()
                .filter(|en| {
                    en.args(clap::Command::new("x")).get_arguments().any(|a| {
                        a.get_long() == Some(long)
                            || a.get_all_aliases().is_some_and(|v| v.contains(&long))
                    })
                })
                .map(|en| en.label())
                .collect();
            if flag.starts_with("--") && !owners.is_empty() {
                let what = if name.is_empty() {
                    "a workload file"
                } else {
                    name
                };
                return format!(
                    "{flag} does not apply to {what}: {flag} applies to {} only",
                    owners.join(", ")
                );
            }
        }
    }
    format!("{} (see --help)", first_line(e))
}

/// The first line of a clap error, without its "error: " prefix.
pub fn first_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .to_string()
}
