use eugene::{SkillError, skill};

struct Tools;

impl Tools {
    /// A method.
    #[skill]
    async fn ping(&self) -> Result<String, SkillError> {
        Ok("pong".into())
    }
}

fn main() {}
