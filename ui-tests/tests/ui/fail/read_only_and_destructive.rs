use eugene::{SkillError, skill};

/// Both read-only and destructive.
#[skill(read_only, destructive)]
async fn wipe() -> Result<String, SkillError> {
    Ok("wiped".into())
}

fn main() {}
