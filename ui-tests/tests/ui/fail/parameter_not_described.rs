// A parameter missing from `# Arguments` (the model would see a bare name), and one marked
// `undocumented` that is described anyway.
use eugene::{SkillError, skill};

/// Search the project.
///
/// # Arguments
/// * `limit` - At most this many hits.
#[skill(read_only)]
async fn search(pattern: String, limit: u32, #[arg(undocumented)] path: String) -> Result<String, SkillError> {
    Ok(format!("{pattern} {limit} {path}"))
}

/// Count lines.
///
/// # Arguments
/// * `path` - The file.
#[skill(read_only)]
async fn count(#[arg(undocumented)] path: String) -> Result<String, SkillError> {
    Ok(path)
}

fn main() {}
