//! Cutting results to the output budget: a result is never longer than the model is meant to read.

use crate::content::Part;
use crate::error::SkillError;
use crate::skill::SkillOutput;

/// Cuts a call's output, or the texts of its error, to `budget` characters.
pub(super) fn truncate_output(
    output: Result<SkillOutput, SkillError>,
    budget: usize,
) -> Result<SkillOutput, SkillError> {
    match output {
        Ok(SkillOutput::Text(text)) => Ok(SkillOutput::Text(truncate_text(text, budget))),
        Ok(SkillOutput::Json(value)) => {
            let text = value.to_string();
            if text.len() <= budget {
                Ok(SkillOutput::Json(value))
            } else {
                Ok(SkillOutput::Text(truncate_text(text, budget)))
            }
        }
        // The text parts share the budget, in order; media is not text and is bounded by the
        // providers' limits instead (`Media::check`).
        Ok(SkillOutput::Content(mut content)) => {
            let mut left = budget;
            for part in &mut content.parts {
                if let Part::Text(text) = part {
                    let cut = truncate_text(std::mem::take(text), left);
                    left = left.saturating_sub(cut.len());
                    *text = cut;
                }
            }
            Ok(SkillOutput::Content(content))
        }
        Err(error) => Err(truncate_error(error, budget)),
    }
}

/// Cuts the texts of an error to the budget, keeping its kind (denials and safety refusals are
/// counted by kind). Error texts can be as long as anything a skill or the model sent: serde quotes
/// a wrongly typed value, an unknown name is repeated, a refusal names the path it refused.
fn truncate_error(error: SkillError, budget: usize) -> SkillError {
    let cut = |text: String| truncate_text(text, budget);
    match error {
        SkillError::Tool { message, source } => SkillError::Tool {
            message: cut(message),
            source,
        },
        SkillError::BadArgs { path, message } => SkillError::BadArgs {
            path: cut(path),
            message: cut(message),
        },
        SkillError::UnknownSkill {
            name,
            suggestions,
            close,
        } => SkillError::UnknownSkill {
            name: cut(name),
            suggestions,
            close,
        },
        SkillError::Denied(reason) => SkillError::Denied(cut(reason)),
        SkillError::Safety(reason) => SkillError::Safety(cut(reason)),
        SkillError::Transient(reason) => SkillError::Transient(cut(reason)),
        other => other,
    }
}

/// Cuts `text` to at most `budget` characters (never inside a character) and, when it cut
/// anything, appends a notice that says how many characters were kept and how many were cut.
/// Public only with the cargo feature `test-utils` (for the property tests): outputs are cut by
/// the registry itself, to its [output budget](crate::Registry::with_output_budget).
///
/// ```
/// let cut = agent_core::registry::truncate_text("héllo wörld".to_owned(), 5);
/// assert_eq!(cut, "héllo\n\n[output truncated: showing 5 of 11 characters; 6 cut]");
/// ```
pub fn truncate_text(text: String, budget: usize) -> String {
    if text.len() <= budget {
        return text;
    }
    let Some((cut_at, _)) = text.char_indices().nth(budget) else {
        return text;
    };
    let total = budget + text[cut_at..].chars().count();
    let mut kept = text;
    kept.truncate(cut_at);
    kept.push_str(&format!(
        "\n\n[output truncated: showing {budget} of {total} characters; {} cut]",
        total - budget
    ));
    kept
}
