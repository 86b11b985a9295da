use eugene::{SkillError, skill};

/// Unknown `#[arg]` option.
///
/// # Arguments
/// * `limit` - Limit.
#[skill]
async fn list(#[arg(defualt = 5)] limit: u32) -> Result<String, SkillError> {
    Ok(limit.to_string())
}

fn main() {}
