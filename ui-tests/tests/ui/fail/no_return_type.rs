use eugene::skill;

/// Returns nothing.
#[skill]
async fn ping() {}

fn main() {}
