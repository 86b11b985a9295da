use std::rc::Rc;

use eugene::{SkillError, skill};

async fn pause() {}

/// Holds an `Rc` across an await.
#[skill]
async fn count() -> Result<String, SkillError> {
    let shared = Rc::new(1);
    pause().await;
    Ok(shared.to_string())
}

fn main() {}
