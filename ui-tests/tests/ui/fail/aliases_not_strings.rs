use eugene::{SkillError, skill};

/// Aliases that are not strings.
#[skill(aliases = [grep, "rg", 3])]
async fn search() -> Result<String, SkillError> {
    Ok("found".into())
}

/// Aliases that are not a list.
#[skill(aliases = "grep")]
async fn find() -> Result<String, SkillError> {
    Ok("found".into())
}

fn main() {}
