//! The sandboxed engine: Rhai's standard packages, the limits, nothing that leaves the
//! process.
use std::time::Instant;

use rhai::module_resolvers::DummyModuleResolver;
use rhai::{Dynamic, Engine};

use crate::limits::{Limits, MAX_EXPR_DEPTH};

/// The value `on_progress` stops a call with when its time budget is spent.
pub(crate) const TIMEOUT_TOKEN: &str = "helikon-script: time budget spent";

/// An engine for compiling (no deadline).
pub(crate) fn compiler(limits: &Limits) -> Engine {
    base(limits)
}

/// An engine for one call: `deadline` is checked at every operation.
pub(crate) fn runner(limits: &Limits, deadline: Instant) -> Engine {
    let mut engine = base(limits);
    engine.on_progress(move |_ops| {
        if Instant::now() >= deadline {
            Some(Dynamic::from(TIMEOUT_TOKEN))
        } else {
            None
        }
    });
    engine
}

fn base(limits: &Limits) -> Engine {
    let mut engine = Engine::new();
    engine
        .set_max_operations(limits.max_operations)
        .set_max_call_levels(limits.max_call_depth)
        .set_max_string_size(limits.max_string_bytes)
        .set_max_array_size(limits.max_array_items)
        .set_max_map_size(limits.max_map_entries)
        .set_max_expr_depths(MAX_EXPR_DEPTH.0, MAX_EXPR_DEPTH.1)
        .set_module_resolver(DummyModuleResolver::new());
    engine.disable_symbol("eval");
    engine.on_print(|_| {});
    engine.on_debug(|_, _, _| {});
    engine
}
