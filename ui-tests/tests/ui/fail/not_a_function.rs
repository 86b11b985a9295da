use eugene::skill;

/// A struct.
#[skill]
struct Ping;

fn main() {}
