use eugene::{SkillContext, SkillError, skill};

/// Two contexts.
#[skill]
async fn twice(first: &SkillContext, second: &SkillContext) -> Result<String, SkillError> {
    Ok(format!("{first:?} {second:?}"))
}

fn main() {}
