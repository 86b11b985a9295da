//! [`Usage`]: the tokens one model call used (or, summed, a run), by kind: input at the normal
//! rate, output, cache reads and writes, reasoning, and audio and image tokens where the provider
//! counts them apart.

use serde::{Deserialize, Serialize};

/// Tokens used by one model call (or, summed, by a run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens billed at the normal rate.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's prompt cache.
    pub cache_write_tokens: u64,
    /// Of the output tokens, those the model spent reasoning before it answered (already counted
    /// in `output_tokens`, so [`Usage::total`] does not add them again). 0 where the provider does
    /// not say.
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// Of the input tokens (normal and cached), those that were audio, where the provider says
    /// (OpenAI's `audio_tokens`, Gemini's `AUDIO` modality); 0 otherwise.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub audio_input_tokens: u64,
    /// Of the input tokens, those that were images or documents, where the provider says
    /// (Gemini's `IMAGE` and `DOCUMENT` modalities); billed as input tokens.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub image_input_tokens: u64,
    /// Of the output tokens, those that were audio, where the provider says.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub audio_output_tokens: u64,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl Usage {
    /// What `self` has more than `before` (which it grew from), count by count.
    pub fn since(&self, before: &Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_sub(before.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(before.output_tokens),
            cache_read_tokens: self
                .cache_read_tokens
                .saturating_sub(before.cache_read_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_sub(before.cache_write_tokens),
            reasoning_tokens: self
                .reasoning_tokens
                .saturating_sub(before.reasoning_tokens),
            audio_input_tokens: self
                .audio_input_tokens
                .saturating_sub(before.audio_input_tokens),
            image_input_tokens: self
                .image_input_tokens
                .saturating_sub(before.image_input_tokens),
            audio_output_tokens: self
                .audio_output_tokens
                .saturating_sub(before.audio_output_tokens),
        }
    }

    /// Every token of the prompt, cached or not: the input tokens with those read from and
    /// written to a cache.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    /// Every token counted (reasoning tokens are a part of the output tokens).
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.audio_input_tokens += other.audio_input_tokens;
        self.image_input_tokens += other.image_input_tokens;
        self.audio_output_tokens += other.audio_output_tokens;
    }
}
