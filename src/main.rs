//! Parse, call `enginebench::run`, map errors to exit codes: nothing else.

use std::process::ExitCode;

fn main() -> ExitCode {
    // A panic is a bug; say so in one line instead of a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        // Not a bug: whoever read the output has gone (`history | head`). Rust ignores
        // SIGPIPE, so printing panics instead of the process dying quietly as a C tool would;
        // say nothing and let the unwinding end the process (guards still run).
        if msg.starts_with("failed printing to std") && msg.contains("os error 32") {
            return;
        }
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "enginebench: internal error{at}: {}",
            enginebench::error::one_line(&msg)
        );
    }));
    let cli = match enginebench::registry::parse_cli(&Default::default()) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
            // clap's message spans several lines; its first paragraph says what is wrong
            // (a line ending in ':' is followed by what it names: the missing arguments).
            let text = e.render().to_string();
            let first: Vec<&str> = text
                .lines()
                .skip_while(|l| l.trim().is_empty())
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let first = if first.is_empty() {
                "invalid arguments".to_string()
            } else {
                first.join(" ")
            };
            eprintln!(
                "enginebench: {} (see --help)",
                first.trim_start_matches("error: ")
            );
            return ExitCode::from(2);
        }
    };
    match enginebench::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("enginebench: {}", enginebench::error::one_line(&e.message));
            ExitCode::from(e.exit_code())
        }
    }
}
