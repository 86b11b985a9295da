use eugene::{SkillError, skill};

/// Read a file.
///
/// # Arguments
/// * `path` - File path.
/// * `max_chars` - Stop after this many characters.
#[skill]
async fn read_file(path: String, max_char: Option<usize>) -> Result<String, SkillError> {
    Ok(format!("{path} {max_char:?}"))
}

fn main() {}
