use eugene::{SkillError, skill};

/// The same alias twice.
#[skill(aliases = ["grep", "grep"])]
async fn search() -> Result<String, SkillError> {
    Ok("found".into())
}

fn main() {}
