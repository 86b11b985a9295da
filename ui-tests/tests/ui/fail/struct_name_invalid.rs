use eugene::{SkillError, skill};

/// A string, not an identifier.
#[skill(struct_name = "Forecaster")]
async fn forecast() -> Result<String, SkillError> {
    Ok(String::new())
}

/// A path, not an identifier.
#[skill(struct_name = weather::Forecaster)]
async fn weather() -> Result<String, SkillError> {
    Ok(String::new())
}

/// A keyword.
#[skill(struct_name = type)]
async fn kind() -> Result<String, SkillError> {
    Ok(String::new())
}

/// The function's own name.
#[skill(struct_name = report)]
async fn report() -> Result<String, SkillError> {
    Ok(String::new())
}

/// No value.
#[skill(struct_name)]
async fn bare() -> Result<String, SkillError> {
    Ok(String::new())
}

fn main() {}
