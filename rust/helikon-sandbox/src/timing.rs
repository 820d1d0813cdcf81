//! Per-call step timing for performance work; off unless `HELIKON_SANDBOX_TIMING` is set.
//!
//! With the variable set to a path starting with `/`, each call appends one line to that file;
//! with any other non-empty value the line goes to standard error. A line reads
//! `helikon-sandbox-timing mode=os_sandbox tmpdir=31 nproc=2 landlock=44 ... total=812`
//! (microseconds since the previous step). The variable is read once per process; when it is
//! unset a step costs one branch.
use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

/// The environment variable that turns the timing on.
pub const TIMING_ENV: &str = "HELIKON_SANDBOX_TIMING";

enum Sink {
    Off,
    Stderr,
    File(PathBuf),
}

fn sink() -> &'static Sink {
    static SINK: OnceLock<Sink> = OnceLock::new();
    SINK.get_or_init(|| match std::env::var_os(TIMING_ENV) {
        Some(v) if v.is_empty() => Sink::Off,
        Some(v) if v.as_encoded_bytes().first() == Some(&b'/') => Sink::File(PathBuf::from(v)),
        Some(_) => Sink::Stderr,
        None => Sink::Off,
    })
}

/// The step clock of one call.
pub(crate) struct Steps {
    on: bool,
    start: Instant,
    last: Instant,
    line: String,
}

impl Steps {
    /// Start timing a call (a no-op clock when the variable is unset).
    pub(crate) fn start(mode: &str) -> Self {
        let on = !matches!(sink(), Sink::Off);
        let now = Instant::now();
        let line = if on {
            format!("helikon-sandbox-timing mode={mode}")
        } else {
            String::new()
        };
        Self {
            on,
            start: now,
            last: now,
            line,
        }
    }

    /// Record the time since the previous step under `name`.
    pub(crate) fn mark(&mut self, name: &str) {
        if !self.on {
            return;
        }
        let now = Instant::now();
        let us = now.duration_since(self.last).as_micros();
        self.last = now;
        self.line.push_str(&format!(" {name}={us}"));
    }

    /// Whether timing is on.
    pub(crate) fn on(&self) -> bool {
        self.on
    }

    /// Record an interval measured elsewhere (the supervisor's and the child's steps).
    pub(crate) fn record(&mut self, name: &str, us: u64) {
        if self.on {
            self.line.push_str(&format!(" {name}={us}"));
        }
    }

    /// Write the line (with the total) if timing is on.
    pub(crate) fn finish(mut self) {
        if !self.on {
            return;
        }
        let total = self.start.elapsed().as_micros();
        self.line.push_str(&format!(" total={total}\n"));
        match sink() {
            Sink::Off => {}
            Sink::Stderr => {
                let _ = std::io::stderr().write_all(self.line.as_bytes());
            }
            Sink::File(p) => {
                if let Ok(mut f) = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                {
                    let _ = f.write_all(self.line.as_bytes());
                }
            }
        }
    }
}
