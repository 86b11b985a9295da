use eugene::{SkillError, skill};

/// Impl trait.
///
/// # Arguments
/// * `value` - Anything printable.
#[skill]
async fn show(value: impl std::fmt::Display) -> Result<String, SkillError> {
    Ok(value.to_string())
}

fn main() {}
