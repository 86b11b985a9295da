use eugene::{SkillError, skill};

/// Serializes, but has no schema to show an MCP client.
#[derive(serde::Serialize)]
struct Summary {
    lines: usize,
}

/// Returns a type without `JsonSchema`.
#[skill]
async fn summarize() -> Result<Summary, SkillError> {
    Ok(Summary { lines: 1 })
}

fn main() {}
