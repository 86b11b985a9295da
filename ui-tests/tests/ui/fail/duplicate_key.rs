use eugene::{SkillError, skill};

/// Duplicate key.
#[skill(name = "a", read_only, name = "b")]
async fn ping() -> Result<String, SkillError> {
    Ok("pong".into())
}

fn main() {}
