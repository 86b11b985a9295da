use eugene::skill;

/// Returns a bare string.
#[skill]
async fn ping() -> String {
    "pong".into()
}

fn main() {}
