use eugene::{SkillError, skill};

/// Unknown key.
#[skill(readonly)]
async fn ping() -> Result<String, SkillError> {
    Ok("pong".into())
}

fn main() {}
