use eugene::{SkillError, skill};

/// Two parameters renamed to one name.
///
/// # Arguments
/// * `query` - The query.
/// * `q` - Also the query.
#[skill]
async fn search(query: String, #[arg(rename = "query")] q: String) -> Result<String, SkillError> {
    Ok(format!("{query} {q}"))
}

fn main() {}
