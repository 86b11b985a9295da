//! Which tool names model APIs accept; the registry refuses any other name, and
//! `agent-macros` keeps a twin of this check for compile time (the root package's
//! `tests/names_agree.rs` pins the two together).

/// Whether model APIs accept `name` as a tool name: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
