//! The resource limits every script call runs under.
use std::time::Duration;

/// Caps on one call of a script tool. [`Limits::default`] suits small lookup and formatting
/// tools; each field can be raised for heavier scripts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Rhai operations (roughly: expression steps) per call.
    pub max_operations: u64,
    /// Nested function calls, `run` included.
    pub max_call_depth: usize,
    /// Bytes in any one string.
    pub max_string_bytes: usize,
    /// Items in any one array.
    pub max_array_items: usize,
    /// Entries in a map built at once (an object literal, a JSON argument); a map grown
    /// key by key is bounded by `max_operations` instead (Rhai checks only whole values).
    pub max_map_entries: usize,
    /// Bytes of the JSON text of `run`'s result.
    pub max_result_bytes: usize,
    /// Wall-clock budget per call.
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_operations: 1_000_000,
            max_call_depth: 32,
            max_string_bytes: 1 << 20,
            max_array_items: 100_000,
            max_map_entries: 100_000,
            max_result_bytes: 1 << 20,
            timeout: Duration::from_secs(5),
        }
    }
}

/// Expression nesting allowed in the source (top level, inside functions).
pub(crate) const MAX_EXPR_DEPTH: (usize, usize) = (64, 32);
