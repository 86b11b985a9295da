use eugene::{SkillError, skill};

/// Not async.
#[skill]
fn ping() -> Result<String, SkillError> {
    Ok("pong".into())
}

fn main() {}
