use eugene::{SkillContext, SkillError, skill};

/// Mutable context.
#[skill]
async fn change(ctx: &mut SkillContext) -> Result<String, SkillError> {
    Ok(format!("{ctx:?}"))
}

fn main() {}
