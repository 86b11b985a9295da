use eugene::{SkillError, skill};

/// Invalid name.
#[skill(name = "read file!")]
async fn read() -> Result<String, SkillError> {
    Ok("text".into())
}

fn main() {}
