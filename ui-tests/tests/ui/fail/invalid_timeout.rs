use eugene::{SkillError, skill};

/// Timeout without a unit.
#[skill(timeout = "30")]
async fn slow() -> Result<String, SkillError> {
    Ok("done".into())
}

/// Timeout of zero.
#[skill(timeout = "0s")]
async fn instant() -> Result<String, SkillError> {
    Ok("done".into())
}

fn main() {}
