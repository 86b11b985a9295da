use eugene::{SkillError, skill};

#[derive(serde::Deserialize)]
struct Options {
    depth: u32,
}

/// Parameter type without `JsonSchema`.
///
/// # Arguments
/// * `options` - Search options.
#[skill]
async fn search(options: Options) -> Result<String, SkillError> {
    Ok(options.depth.to_string())
}

fn main() {}
