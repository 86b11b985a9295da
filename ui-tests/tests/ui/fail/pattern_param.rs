use eugene::{SkillError, skill};

/// Pattern parameter.
#[skill]
async fn add((a, b): (i32, i32)) -> Result<String, SkillError> {
    Ok((a + b).to_string())
}

fn main() {}
