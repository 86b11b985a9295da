// A type of the user's named exactly like the struct `#[skill]` generates: one error, at the
// function's name, saying what is generated and which key renames it.
use eugene::{SkillError, skill};

pub struct ForecastSkill {
    pub celsius: f64,
}

/// Forecast the weather.
#[skill(read_only)]
pub async fn forecast() -> Result<String, SkillError> {
    Ok(format!("{} °C", ForecastSkill { celsius: 20.0 }.celsius))
}

fn main() {}
