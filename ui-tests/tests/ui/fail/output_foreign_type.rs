use eugene::{SkillError, skill};

/// Returns a type of another crate that has neither `Serialize` nor `JsonSchema`.
#[skill]
async fn started() -> Result<std::time::Instant, SkillError> {
    Ok(std::time::Instant::now())
}

fn main() {}
