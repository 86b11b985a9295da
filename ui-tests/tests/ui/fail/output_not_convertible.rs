use eugene::{SkillError, skill};

struct Summary {
    lines: usize,
}

/// Returns a type that is not output.
#[skill]
async fn report() -> Result<Summary, SkillError> {
    Ok(Summary { lines: 1 })
}

fn main() {}
