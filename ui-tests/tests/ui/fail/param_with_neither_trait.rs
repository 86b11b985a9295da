// A parameter type with neither `Deserialize` nor `JsonSchema`, beside a good one: one error, at
// the bad parameter's type.
use eugene::{SkillError, skill};

struct Options {
    depth: u32,
}

/// Parameter type with neither trait.
///
/// # Arguments
/// * `pattern` - What to find.
/// * `options` - Search options.
#[skill]
async fn search(pattern: String, options: Options) -> Result<String, SkillError> {
    Ok(format!("{pattern} {}", options.depth))
}

fn main() {}
