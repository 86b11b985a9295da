use eugene::skill;

/// Several mistakes: one build reports all of them.
///
/// # Arguments
/// * `nme` - A name.
#[skill(read_only, destructive, timeout = "soon", nmae = "x")]
fn greet(name: &str) -> String {
    format!("hello {name}")
}

fn main() {}
