//! `helikon._native`: the one binding crate.
//!
//! Conversions, GIL release and error mapping only; no domain logic lives here. Each native
//! area registers its functions and classes from its own module, and `errors.rs` is the one
//! place Rust errors become Python exceptions.
use pyo3::prelude::*;

mod buildinfo;
mod errors;
mod loop_;
mod redact;
mod sandbox;
mod schema;
mod script;
mod shell;
mod tokens;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    loop_::register(m)?;
    schema::register(m)?;
    script::register(m)?;
    shell::register(m)?;
    redact::register(m)?;
    sandbox::register(m)?;
    tokens::register(m)?;
    buildinfo::register(m)?;
    Ok(())
}
