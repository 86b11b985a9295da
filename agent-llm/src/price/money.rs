//! Amounts of money: [`Usd`], counted in whole picodollars so that sums are exact, and
//! [`Cost`], what a model call or a run cost, part by part.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Picodollars in a dollar.
const PICO: f64 = 1e12;

/// An amount in US dollars, kept as a whole number of picodollars (10⁻¹² $): a price per million
/// tokens with up to six decimals is a whole number of picodollars per token, so a run's cost is
/// summed without rounding. Serialized as a number of dollars.
///
/// ```
/// use agent_llm::Usd;
/// let price = Usd::dollars(3.0) / 1_000_000; // $3 per million tokens, per token
/// assert_eq!((price * 1_500).to_string(), "$0.0045");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Usd {
    pico: u64,
}

impl Usd {
    /// Nothing.
    pub const ZERO: Usd = Usd { pico: 0 };

    /// `amount` dollars, rounded to the picodollar; negative or not-a-number amounts are zero,
    /// amounts too large to count saturate.
    pub fn dollars(amount: f64) -> Usd {
        let pico = (amount * PICO).round();
        Usd {
            // `as` saturates, and maps NaN to 0.
            pico: pico as u64,
        }
    }

    /// `pico` picodollars.
    pub const fn from_picodollars(pico: u64) -> Usd {
        Usd { pico }
    }

    /// The amount in picodollars.
    pub const fn picodollars(self) -> u64 {
        self.pico
    }

    /// The amount in dollars (rounded to what an `f64` holds).
    pub fn as_dollars(self) -> f64 {
        self.pico as f64 / PICO
    }

    /// `self - other`, or zero when `other` is more.
    pub fn saturating_sub(self, other: Usd) -> Usd {
        Usd {
            pico: self.pico.saturating_sub(other.pico),
        }
    }
}

impl std::ops::Add for Usd {
    type Output = Usd;
    fn add(self, other: Usd) -> Usd {
        Usd {
            pico: self.pico.saturating_add(other.pico),
        }
    }
}

impl std::ops::AddAssign for Usd {
    fn add_assign(&mut self, other: Usd) {
        *self = *self + other;
    }
}

impl std::ops::Mul<u64> for Usd {
    type Output = Usd;
    fn mul(self, count: u64) -> Usd {
        Usd {
            pico: self.pico.saturating_mul(count),
        }
    }
}

impl std::ops::Div<u64> for Usd {
    type Output = Usd;
    /// Rounded down; dividing by zero gives zero.
    fn div(self, by: u64) -> Usd {
        Usd {
            pico: self.pico.checked_div(by).unwrap_or(0),
        }
    }
}

impl std::iter::Sum for Usd {
    fn sum<I: Iterator<Item = Usd>>(iter: I) -> Usd {
        iter.fold(Usd::ZERO, |a, b| a + b)
    }
}

impl std::fmt::Display for Usd {
    /// `$0.0045`, `$12.50`: at least two decimals, and up to six where they are not zero.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let micro = self.pico.div_ceil(1_000_000);
        let whole = micro / 1_000_000;
        let mut fraction = format!("{:06}", micro % 1_000_000);
        while fraction.len() > 2 && fraction.ends_with('0') {
            fraction.pop();
        }
        write!(f, "${whole}.{fraction}")
    }
}

impl Serialize for Usd {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.as_dollars())
    }
}

impl<'de> Deserialize<'de> for Usd {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Usd, D::Error> {
        let dollars = f64::deserialize(deserializer)?;
        if !dollars.is_finite() || dollars < 0.0 {
            return Err(serde::de::Error::custom(format!(
                "an amount of dollars must be a number of at least 0, not {dollars}"
            )));
        }
        Ok(Usd::dollars(dollars))
    }
}

/// What model calls cost, part by part, in US dollars, from a
/// [`PriceTable`](super::PriceTable). Calls the table has no price for are counted in
/// [`Cost::unpriced_calls`], never as $0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cost {
    /// Input tokens at the normal rate.
    pub input: Usd,
    /// Output tokens (reasoning tokens included, unless priced apart in `reasoning`).
    pub output: Usd,
    /// Input tokens read from the prompt cache.
    pub cache_read: Usd,
    /// Input tokens written to the prompt cache.
    pub cache_write: Usd,
    /// Reasoning tokens, where a price table bills them apart from the output; zero otherwise.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning: Usd,
    /// Audio tokens, in and out, where a price table bills them apart (they are then taken out
    /// of `input` and `output`); zero otherwise.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub audio: Usd,
    /// A price per request, where the model has one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub requests: Usd,
    /// Model calls that could not be priced (the table knows no price for their model): the
    /// amounts above leave them out.
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub unpriced_calls: u64,
}

fn is_zero(amount: &Usd) -> bool {
    *amount == Usd::ZERO
}

fn is_zero_count(count: &u64) -> bool {
    *count == 0
}

impl Cost {
    /// The cost of one call that could not be priced.
    pub const UNPRICED: Cost = Cost {
        input: Usd::ZERO,
        output: Usd::ZERO,
        cache_read: Usd::ZERO,
        cache_write: Usd::ZERO,
        reasoning: Usd::ZERO,
        audio: Usd::ZERO,
        requests: Usd::ZERO,
        unpriced_calls: 1,
    };

    /// Every part together.
    pub fn total(&self) -> Usd {
        self.input
            + self.output
            + self.cache_read
            + self.cache_write
            + self.reasoning
            + self.audio
            + self.requests
    }

    /// Whether every call counted here was priced.
    pub fn is_complete(&self) -> bool {
        self.unpriced_calls == 0
    }

    /// What `self` has more than `before` (which it grew from), part by part.
    pub fn since(&self, before: &Cost) -> Cost {
        Cost {
            input: self.input.saturating_sub(before.input),
            output: self.output.saturating_sub(before.output),
            cache_read: self.cache_read.saturating_sub(before.cache_read),
            cache_write: self.cache_write.saturating_sub(before.cache_write),
            reasoning: self.reasoning.saturating_sub(before.reasoning),
            audio: self.audio.saturating_sub(before.audio),
            requests: self.requests.saturating_sub(before.requests),
            unpriced_calls: self.unpriced_calls.saturating_sub(before.unpriced_calls),
        }
    }
}

impl std::ops::AddAssign for Cost {
    fn add_assign(&mut self, other: Cost) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.reasoning += other.reasoning;
        self.audio += other.audio;
        self.requests += other.requests;
        self.unpriced_calls += other.unpriced_calls;
    }
}

impl std::fmt::Display for Cost {
    /// `$0.0123`; `$0.0123 + 2 unpriced calls` when some were not priced; `unpriced` when none
    /// of the calls counted was.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total = self.total();
        match self.unpriced_calls {
            0 => write!(f, "{total}"),
            n if total == Usd::ZERO => {
                write!(f, "unpriced ({n} call{})", if n == 1 { "" } else { "s" })
            }
            n => write!(
                f,
                "{total} + {n} unpriced call{}",
                if n == 1 { "" } else { "s" }
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_print_with_the_decimals_that_count() {
        assert_eq!(Usd::dollars(12.5).to_string(), "$12.50");
        assert_eq!(Usd::dollars(0.0045).to_string(), "$0.0045");
        assert_eq!(Usd::ZERO.to_string(), "$0.00");
        // Less than a micro-dollar is shown as one, never as nothing.
        assert_eq!(Usd::from_picodollars(1).to_string(), "$0.000001");
    }

    #[test]
    fn bad_amounts_are_zero_or_refused() {
        assert_eq!(Usd::dollars(f64::NAN), Usd::ZERO);
        assert_eq!(Usd::dollars(-3.0), Usd::ZERO);
        assert_eq!(Usd::dollars(f64::INFINITY).picodollars(), u64::MAX);
        assert!(serde_json::from_str::<Usd>("-1").is_err());
    }

    #[test]
    fn amounts_survive_json() {
        let cost = Cost {
            input: Usd::from_picodollars(3_000_000 * 1234),
            output: Usd::dollars(0.75),
            unpriced_calls: 2,
            ..Cost::default()
        };
        let back: Cost = serde_json::from_str(&serde_json::to_string(&cost).unwrap()).unwrap();
        assert_eq!(back, cost);
    }

    #[test]
    fn a_cost_says_what_it_could_not_price() {
        let mut cost = Cost::UNPRICED;
        assert_eq!(cost.to_string(), "unpriced (1 call)");
        cost += Cost {
            output: Usd::dollars(0.5),
            ..Cost::default()
        };
        assert_eq!(cost.to_string(), "$0.50 + 1 unpriced call");
        assert!(!cost.is_complete());
    }
}
