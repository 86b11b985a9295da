use eugene::{SkillError, skill};

/// Alias equal to the name.
#[skill(aliases = ["find", "search"])]
async fn search() -> Result<String, SkillError> {
    Ok("found".into())
}

fn main() {}
