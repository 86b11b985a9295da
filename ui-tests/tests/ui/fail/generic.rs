use eugene::{SkillError, skill};

/// Generic.
///
/// # Arguments
/// * `value` - Anything.
#[skill]
async fn show<T: std::fmt::Debug>(value: T) -> Result<String, SkillError> {
    Ok(format!("{value:?}"))
}

fn main() {}
