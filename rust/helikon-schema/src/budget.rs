//! Node and depth budgets that bound work on hostile schemas.
use crate::error::SchemaError;

/// Default node budget: schema nodes visited, counting every `$ref` expansion.
pub const DEFAULT_MAX_NODES: usize = 10_000;
/// Default depth budget: schema nesting levels.
pub const DEFAULT_MAX_DEPTH: usize = 64;

/// Work limits for one normalization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most schema nodes a run may visit (after `$ref` expansion).
    pub max_nodes: usize,
    /// Deepest schema nesting a run may reach.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_nodes: DEFAULT_MAX_NODES,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// Counts visited nodes against [`Limits::max_nodes`].
#[derive(Debug)]
pub(crate) struct Budget {
    limits: Limits,
    used: usize,
}

impl Budget {
    pub(crate) fn new(limits: Limits) -> Self {
        Self { limits, used: 0 }
    }

    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// Count one node; `path` renders the pointer only when the budget is exceeded.
    pub(crate) fn tick(&mut self, path: impl FnOnce() -> String) -> Result<(), SchemaError> {
        self.used += 1;
        if self.used > self.limits.max_nodes {
            return Err(SchemaError::TooLarge {
                limit: self.limits.max_nodes,
                path: path(),
            });
        }
        Ok(())
    }
}
