use eugene::{SkillError, skill};

/// Borrowed string.
///
/// # Arguments
/// * `path` - A path.
#[skill]
async fn read(path: &str) -> Result<String, SkillError> {
    Ok(path.to_owned())
}

fn main() {}
