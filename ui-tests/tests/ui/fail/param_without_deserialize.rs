// A parameter type with `JsonSchema` but no `Deserialize`: one error, at the parameter's type,
// and nothing from inside serde.
use eugene::{SkillError, skill};

#[derive(schemars::JsonSchema)]
struct Options {
    depth: u32,
}

/// Parameter type without `Deserialize`.
///
/// # Arguments
/// * `options` - Search options.
#[skill]
async fn search(options: Options) -> Result<String, SkillError> {
    Ok(options.depth.to_string())
}

fn main() {}
