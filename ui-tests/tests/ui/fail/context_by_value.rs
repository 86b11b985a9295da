// The context taken by value: one error that says to borrow it, not one about `Deserialize`.
use eugene::{SkillContext, SkillError, skill};

/// Context by value.
#[skill]
async fn root(ctx: SkillContext) -> Result<String, SkillError> {
    Ok(ctx.workspace_root().display().to_string())
}

fn main() {}
