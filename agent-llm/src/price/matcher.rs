//! Which names a price table entry is for: the match rules of the genai-prices data
//! (`equals`, `starts_with`, `ends_with`, `contains`, `regex`, `or`, `and`), compared without
//! regard to case.

use serde::{Deserialize, Deserializer};

/// A rule a model's (or a provider's) name must follow.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum Matcher {
    /// The whole name.
    Equals(#[serde(deserialize_with = "lower")] String),
    /// The name's beginning.
    StartsWith(#[serde(deserialize_with = "lower")] String),
    /// The name's end.
    EndsWith(#[serde(deserialize_with = "lower")] String),
    /// Anywhere in the name.
    Contains(#[serde(deserialize_with = "lower")] String),
    /// A regular expression (`regex` crate syntax) found in the name.
    Regex(#[serde(deserialize_with = "compile")] regex::Regex),
    /// Any of the rules.
    Or(Vec<Matcher>),
    /// Every one of the rules.
    And(Vec<Matcher>),
}

/// Rules compare lowercase names: their texts are lowered once, when read.
fn lower<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(String::deserialize(deserializer)?.to_lowercase())
}

fn compile<'de, D: Deserializer<'de>>(deserializer: D) -> Result<regex::Regex, D::Error> {
    let pattern = String::deserialize(deserializer)?;
    regex::RegexBuilder::new(&pattern)
        .case_insensitive(true)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| {
            serde::de::Error::custom(format!("the regex `{pattern}` does not compile: {e}"))
        })
}

impl Matcher {
    /// Whether `name` (already lowercase) follows the rule.
    pub(super) fn matches(&self, name: &str) -> bool {
        match self {
            Matcher::Equals(s) => name == s,
            Matcher::StartsWith(s) => name.starts_with(s.as_str()),
            Matcher::EndsWith(s) => name.ends_with(s.as_str()),
            Matcher::Contains(s) => name.contains(s.as_str()),
            Matcher::Regex(re) => re.is_match(name),
            Matcher::Or(any) => any.iter().any(|m| m.matches(name)),
            Matcher::And(all) => all.iter().all(|m| m.matches(name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(json: &str) -> Matcher {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn rules_combine_and_ignore_case() {
        let m = rule(r#"{"or": [{"starts_with": "Claude-3-5"}, {"contains": "claude-v2"}]}"#);
        assert!(m.matches("claude-3-5-sonnet-20241022"));
        assert!(m.matches("anthropic.claude-v2:1"));
        assert!(!m.matches("claude-3-opus"));
        let m = rule(r#"{"and": [{"contains": "huggingface"}, {"contains": "groq"}]}"#);
        assert!(m.matches("huggingface/groq"));
        assert!(!m.matches("groq"));
        assert!(rule(r#"{"regex": "^o[134]"}"#).matches("o3-mini"));
        assert!(!rule(r#"{"regex": "^o[134]"}"#).matches("gpt-4o"));
    }

    #[test]
    fn unknown_rules_and_bad_patterns_are_refused() {
        assert!(serde_json::from_str::<Matcher>(r#"{"glob": "claude*"}"#).is_err());
        assert!(serde_json::from_str::<Matcher>(r#"{"regex": "("}"#).is_err());
    }
}
