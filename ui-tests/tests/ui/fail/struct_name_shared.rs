// Two functions whose names differ only in case style generate the same struct name.
use eugene::{SkillError, skill};

/// Get a user.
#[skill]
pub async fn get_user() -> Result<String, SkillError> {
    Ok(String::new())
}

/// Get a user, again.
#[skill]
#[allow(non_snake_case)]
pub async fn getUser() -> Result<String, SkillError> {
    Ok(String::new())
}

fn main() {}
