//! Per-call cost of a sandboxed `true`, step by step, against a plain spawn.
//!
//! `cargo bench -p helikon-sandbox --bench spawn` (as root the sandbox runs as 65534:65534).
//! Environment knobs: `SBX_BENCH_ITERS` (default 300), `SBX_BENCH_RSS_MB` (default 64: touch
//! that much heap first, so the bench process is about the size of a Python host; spawn
//! costs that grow with the caller's size show up). Variants run interleaved round by round.
//! Prints the median and p90 per call, the ratio to the plain spawn, and the median of every
//! step the library records under `HELIKON_SANDBOX_TIMING` (see `src/timing.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::os::unix::fs::{chown, PermissionsExt};
use std::process::Command;
use std::time::{Duration, Instant};

use helikon_sandbox::{Mode, SandboxConfig, SandboxPolicy, TIMING_ENV};

const NOBODY: (u32, u32) = (65534, 65534);

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn policy(root: &std::path::Path, mode: Mode, nproc: bool) -> SandboxPolicy {
    let mut cfg = SandboxConfig::new(root);
    cfg.mode = mode;
    if euid() == 0 {
        cfg.run_as = Some(NOBODY);
    }
    if !nproc {
        cfg.limits.max_processes = None;
    }
    SandboxPolicy::build(cfg).unwrap()
}

/// The effective uid, without `unsafe` (the owner of `/proc/self`).
fn euid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(0)
}

fn pct(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    s[((q * s.len() as f64) as usize).min(s.len() - 1)]
}

fn main() {
    let iters = knob("SBX_BENCH_ITERS", 300);
    let rss_mb = knob("SBX_BENCH_RSS_MB", 64);
    let ballast: Vec<u8> = vec![1u8; rss_mb << 20];
    let log = std::env::temp_dir().join(format!("sbx-bench-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    // Read once by the library, before the first call.
    std::env::set_var(TIMING_ENV, &log);

    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    if euid() == 0 {
        chown(tmp.path(), Some(NOBODY.0), Some(NOBODY.1)).unwrap();
    }
    let host = policy(tmp.path(), Mode::Host, true);
    let os = policy(tmp.path(), Mode::OsSandbox, true);
    let os_no_nproc = policy(tmp.path(), Mode::OsSandbox, false);
    let t = Duration::from_secs(10);

    type Variant<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let variants: Vec<Variant<'_>> = vec![
        (
            "plain /bin/sh -c true (std Command)",
            Box::new(|| {
                let st = Command::new("/bin/sh")
                    .args(["-c", "true"])
                    .status()
                    .unwrap();
                assert!(st.success());
            }),
        ),
        (
            "host",
            Box::new(|| assert_eq!(host.run("true", t).unwrap().exit_code, Some(0))),
        ),
        (
            "os_sandbox",
            Box::new(|| assert_eq!(os.run("true", t).unwrap().exit_code, Some(0))),
        ),
        (
            "os_sandbox, no nproc",
            Box::new(|| assert_eq!(os_no_nproc.run("true", t).unwrap().exit_code, Some(0))),
        ),
    ];
    for _ in 0..20 {
        for (_, f) in &variants {
            f();
        }
    }
    let _ = std::fs::remove_file(&log);
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for _ in 0..iters {
        for (i, (_, f)) in variants.iter().enumerate() {
            let t0 = Instant::now();
            f();
            times[i].push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    println!(
        "{iters} iterations, ballast {} MiB, {} cpus",
        ballast.len() >> 20,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let base = pct(&times[0], 0.5);
    for ((name, _), v) in variants.iter().zip(&times) {
        println!(
            "{name:<36} median {:>7.0}µs  p90 {:>7.0}µs  ratio {:.2}",
            pct(v, 0.5),
            pct(v, 0.9),
            pct(v, 0.5) / base
        );
    }
    // Per-step medians, by mode (the no-nproc variant is folded into os_sandbox).
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let mut steps: BTreeMap<String, BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for line in text.lines() {
        let mut mode = String::new();
        for kv in line.split_whitespace().skip(1) {
            let Some((k, v)) = kv.split_once('=') else {
                continue;
            };
            if k == "mode" {
                mode = v.to_string();
                continue;
            }
            if !order.iter().any(|o| o == k) {
                order.push(k.to_string());
            }
            if let Ok(x) = v.parse::<f64>() {
                steps
                    .entry(mode.clone())
                    .or_default()
                    .entry(k.to_string())
                    .or_default()
                    .push(x);
            }
        }
    }
    for (mode, by_step) in &steps {
        let parts: Vec<String> = order
            .iter()
            .filter_map(|k| by_step.get(k).map(|v| format!("{k}={:.0}", pct(v, 0.5))))
            .collect();
        println!("steps {mode} (median µs): {}", parts.join(" "));
    }
    let _ = std::fs::remove_file(&log);
    drop(ballast);
}
