//! `build_info()`: how this native module was built, for `helikon --version` and
//! `helikon doctor`.
//!
//! Use case: a bug report or a slow run should say whether the native core is a release or a
//! debug build and for which target, without a Rust toolchain at hand. The answer is fixed at
//! compile time (no build script): the crate version (the Cargo workspace's, the one version of
//! the project), the profile (`release` when compiled without debug assertions, as
//! `--release` does, else `debug`) and the target as `arch-os[-env]` from the compiler's
//! `cfg` values.
//!
//! Limitations: an optimized build with debug assertions switched on reports `debug`; the
//! target is the triple's arch, OS and C environment, not the vendor field.
//!
//! Tests: tests/cli/test_doctor.py and tests/test_versioning.py read it through the Python API.
use pyo3::prelude::*;

/// The C environment part of the target (`gnu`, `musl`, `msvc`), empty where there is none.
const TARGET_ENV: &str = if cfg!(target_env = "gnu") {
    "gnu"
} else if cfg!(target_env = "musl") {
    "musl"
} else if cfg!(target_env = "msvc") {
    "msvc"
} else {
    ""
};

/// The build facts as JSON: `{"version", "profile", "target"}`.
#[pyfunction]
fn build_info() -> String {
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let mut target = format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS);
    if !TARGET_ENV.is_empty() {
        target.push('-');
        target.push_str(TARGET_ENV);
    }
    serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "profile": profile,
        "target": target,
    })
    .to_string()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    Ok(())
}
