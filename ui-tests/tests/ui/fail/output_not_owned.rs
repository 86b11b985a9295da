// A result borrowed from the context (it would end with the call), and `impl Trait` (no schema).
use eugene::{SkillContext, SkillError, skill};

/// Returns text borrowed from the context, which cannot outlive the call.
#[skill]
async fn root(ctx: &SkillContext) -> Result<&str, SkillError> {
    Ok(ctx.workspace_root().to_str().unwrap_or("?"))
}

/// Returns `impl Trait`, which has no schema.
#[skill]
async fn anything() -> Result<impl serde::Serialize, SkillError> {
    Ok(1)
}

fn main() {}
