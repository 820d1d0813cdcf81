//! Token usage, summed field-wise across model turns.
use serde::{Deserialize, Serialize};

/// Tokens spent by one model turn or, summed, by a whole run.
///
/// Every field defaults to 0 when absent from the JSON. Addition saturates instead of
/// overflowing, so a hostile usage report cannot make the transition panic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_input_tokens: u64,
    pub reasoning_tokens: u64,
    pub total_tokens: u64,
    /// Tokens written to a provider prompt cache (Anthropic, Bedrock); omitted when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub cache_write_input_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl std::ops::Add for Usage {
    type Output = Usage;

    /// Field-wise, saturating sum.
    fn add(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cached_input_tokens: self
                .cached_input_tokens
                .saturating_add(other.cached_input_tokens),
            reasoning_tokens: self.reasoning_tokens.saturating_add(other.reasoning_tokens),
            total_tokens: self.total_tokens.saturating_add(other.total_tokens),
            cache_write_input_tokens: self
                .cache_write_input_tokens
                .saturating_add(other.cache_write_input_tokens),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Usage;

    #[test]
    fn add_is_field_wise_and_saturating() {
        let a = Usage {
            input_tokens: 1,
            output_tokens: 2,
            cached_input_tokens: 3,
            reasoning_tokens: 4,
            total_tokens: u64::MAX,
            cache_write_input_tokens: 0,
        };
        let b = Usage {
            input_tokens: 10,
            output_tokens: 20,
            cached_input_tokens: 30,
            reasoning_tokens: 40,
            total_tokens: 5,
            cache_write_input_tokens: 7,
        };
        let sum = a + b;
        assert_eq!(sum.input_tokens, 11);
        assert_eq!(sum.output_tokens, 22);
        assert_eq!(sum.cached_input_tokens, 33);
        assert_eq!(sum.reasoning_tokens, 44);
        assert_eq!(sum.total_tokens, u64::MAX);
    }
}
