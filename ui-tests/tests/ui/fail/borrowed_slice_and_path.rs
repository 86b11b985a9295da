use eugene::{SkillError, skill};

/// Borrowed slice and path.
///
/// # Arguments
/// * `bytes` - Some bytes.
/// * `path` - A path.
#[skill]
async fn write(bytes: &[u8], path: &std::path::Path) -> Result<String, SkillError> {
    Ok(format!("{} {}", bytes.len(), path.display()))
}

fn main() {}
