use eugene::{SkillError, skill};

#[skill(read_only)]
async fn ping() -> Result<String, SkillError> {
    Ok("pong".into())
}

/// Only an arguments section.
///
/// # Arguments
/// * `text` - Text.
#[skill(description = "  ")]
async fn echo(text: String) -> Result<String, SkillError> {
    Ok(text)
}

fn main() {}
