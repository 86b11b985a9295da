//! The registry's Agent Skills served as MCP resources (`resources/list`, `resources/read`).
//!
//! Every Agent Skill of the served registry ([`Registry::agent_skills`]) is a folder of
//! resources under the URI scheme of the MCP Skills extension (SEP-2640):
//!
//! | URI | what | MIME type |
//! |---|---|---|
//! | `skill://NAME/SKILL.md` | the skill's `SKILL.md` | `text/markdown` |
//! | `skill://NAME/PATH` | each other file of its folder (`references/forms.md`, `scripts/fill.py`) | by extension |
//!
//! Decisions, where the protocol is silent:
//!
//! - `SKILL.md` is **rebuilt** from what the registry keeps: its front matter (`name`,
//!   `description`, then `license`, `compatibility`, `allowed-tools` and `metadata` when set,
//!   each value a double-quoted YAML string) and its Markdown body byte for byte. A skill made
//!   by hand ([`AgentSkill::new`](agent_core::AgentSkill::new)) has one too, and nothing is
//!   read from disk that the registry does not already offer through `load_skill`.
//! - Path segments are percent-encoded (RFC 3986 unreserved characters and `/` are kept), so
//!   every listed URI reads back exactly; a URI that was not listed is `-32002` (resource not
//!   found), naming it.
//! - Files are read as `load_skill` reads them (through the skill's [`AgentSkillFiles`], on a
//!   blocking thread: a skill loaded from disk stays confined to its folder and to its loader's
//!   size limit), and at most [`MAX_RESOURCE_BYTES`] are served: a larger file is an error
//!   with its size. UTF-8 text is served as `text`, anything else as a base64 `blob`.
//! - The server advertises the `resources` capability only when the registry has Agent Skills,
//!   and no `subscribe` or `listChanged` (a registry's skills do not change while it is
//!   served).
//!
//! [`Registry::agent_skills`]: agent_core::Registry::agent_skills
//! [`AgentSkillFiles`]: agent_core::AgentSkillFiles

use std::fmt::Write as _;

use agent_core::AgentSkill;
use base64::Engine as _;
use rmcp::ErrorData;
use rmcp::model::{Resource, ResourceContents};
use serde_json::Value;

/// The URI scheme of Agent Skills' resources.
pub const SKILL_SCHEME: &str = "skill://";

/// The most bytes of one file `resources/read` serves (16 MiB).
pub const MAX_RESOURCE_BYTES: usize = 16 * 1024 * 1024;

/// The resources of `skills`, in the registry's order (by name), each `SKILL.md` first.
pub(crate) fn list(skills: &[AgentSkill]) -> Vec<Resource> {
    let mut resources = Vec::new();
    for skill in skills {
        let skill_md = skill_md(skill);
        resources.push(
            Resource::new(skill_uri(&skill.name, "SKILL.md"), skill.name.clone())
                .with_title(format!("Agent Skill {}", skill.name))
                .with_description(skill.description.clone())
                .with_mime_type("text/markdown")
                .with_size(skill_md.len() as u64),
        );
        for path in skill.files.list() {
            resources.push(
                Resource::new(
                    skill_uri(&skill.name, path),
                    format!("{}/{path}", skill.name),
                )
                .with_mime_type(mime_type(path)),
            );
        }
    }
    resources
}

/// The contents of the resource at `uri`, or the JSON-RPC error a client gets.
pub(crate) async fn read(skills: &[AgentSkill], uri: &str) -> Result<ResourceContents, ErrorData> {
    let not_found = || {
        ErrorData::resource_not_found(
            format!("no resource `{uri}`: resources/list names the ones this server has"),
            Some(serde_json::json!({ "uri": uri })),
        )
    };
    for skill in skills {
        if uri == skill_uri(&skill.name, "SKILL.md") {
            return Ok(ResourceContents::text(skill_md(skill), uri).with_mime_type("text/markdown"));
        }
        let Some(path) = skill
            .files
            .list()
            .iter()
            .find(|path| uri == skill_uri(&skill.name, path))
        else {
            continue;
        };
        let files = skill.files.clone();
        let owned = path.clone();
        let bytes = tokio::task::spawn_blocking(move || files.read(&owned))
            .await
            .map_err(|e| ErrorData::internal_error(format!("reading `{uri}` failed: {e}"), None))?
            .map_err(|e| ErrorData::internal_error(format!("cannot read `{uri}`: {e}"), None))?;
        if bytes.len() > MAX_RESOURCE_BYTES {
            return Err(ErrorData::invalid_request(
                format!(
                    "`{uri}` has {} bytes, more than the {MAX_RESOURCE_BYTES} this server serves",
                    bytes.len()
                ),
                None,
            ));
        }
        let contents = match String::from_utf8(bytes) {
            Ok(text) => ResourceContents::text(text, uri),
            Err(binary) => ResourceContents::blob(
                base64::engine::general_purpose::STANDARD.encode(binary.as_bytes()),
                uri,
            ),
        };
        return Ok(contents.with_mime_type(mime_type(path)));
    }
    Err(not_found())
}

/// `skill://NAME/PATH`, each segment percent-encoded.
fn skill_uri(name: &str, path: &str) -> String {
    let mut uri = String::from(SKILL_SCHEME);
    encode(name, &mut uri);
    for segment in path.split('/') {
        uri.push('/');
        encode(segment, &mut uri);
    }
    uri
}

/// Appends `text` percent-encoded, keeping RFC 3986's unreserved characters.
fn encode(text: &str, out: &mut String) {
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
}

/// A skill's `SKILL.md` as the [module docs](self) say it is rebuilt.
pub(crate) fn skill_md(skill: &AgentSkill) -> String {
    let quoted = |text: &str| Value::from(text).to_string();
    let mut out = String::from("---\n");
    let _ = writeln!(out, "name: {}", quoted(&skill.name));
    let _ = writeln!(out, "description: {}", quoted(&skill.description));
    if let Some(license) = &skill.license {
        let _ = writeln!(out, "license: {}", quoted(license));
    }
    if let Some(compatibility) = &skill.compatibility {
        let _ = writeln!(out, "compatibility: {}", quoted(compatibility));
    }
    if !skill.allowed_tools.is_empty() {
        let _ = writeln!(
            out,
            "allowed-tools: {}",
            quoted(&skill.allowed_tools.join(" "))
        );
    }
    if !skill.metadata.is_empty() {
        out.push_str("metadata:\n");
        for (key, value) in &skill.metadata {
            let _ = writeln!(out, "  {}: {}", quoted(key), quoted(value));
        }
    }
    out.push_str("---\n");
    out.push_str(&skill.instructions);
    out
}

/// The MIME type of a file, by its extension; `application/octet-stream` when unknown.
fn mime_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map_or("", |(_, ext)| ext);
    match extension.to_ascii_lowercase().as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "html" | "htm" => "text/html",
        "csv" => "text/csv",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_encode_what_is_not_unreserved() {
        assert_eq!(skill_uri("greet", "SKILL.md"), "skill://greet/SKILL.md");
        assert_eq!(
            skill_uri("greet", "references/my notes?.md"),
            "skill://greet/references/my%20notes%3F.md"
        );
    }

    #[test]
    fn a_rebuilt_skill_md_parses_back_to_the_same_skill() {
        let skill = AgentSkill::new(
            "pdf-tools",
            "Fill PDF forms: \"AcroForm\" only, # not XFA; --- see below",
            "# Steps\n\n---\nnot front matter\n",
        )
        .with_details(
            Some("Apache-2.0".into()),
            Some("needs: python3".into()),
            vec!["read_file".into(), "run_shell".into()],
            vec![
                ("owner".into(), "docs: team".into()),
                ("tier".into(), "1".into()),
            ],
        );
        let text = skill_md(&skill);
        let manifest = agent_skills_spec::parse(&text, "pdf-tools").expect("a valid SKILL.md");
        assert_eq!(manifest.name, skill.name);
        assert_eq!(manifest.description, skill.description);
        assert_eq!(manifest.license, skill.license);
        assert_eq!(manifest.compatibility, skill.compatibility);
        assert_eq!(manifest.allowed_tools, skill.allowed_tools);
        assert_eq!(manifest.metadata, skill.metadata);
        assert_eq!(manifest.body(&text), &*skill.instructions);
    }

    #[test]
    fn skill_md_quotes_front_matter_values() {
        let skill = AgentSkill::new("greet", "Say: \"hi\"\n--- now", "Body\n").with_details(
            Some("MIT".into()),
            None,
            vec!["read_file".into(), "run_shell".into()],
            vec![("owner".into(), "ops: team".into())],
        );
        assert_eq!(
            skill_md(&skill),
            "---\nname: \"greet\"\ndescription: \"Say: \\\"hi\\\"\\n--- now\"\nlicense: \"MIT\"\n\
             allowed-tools: \"read_file run_shell\"\nmetadata:\n  \"owner\": \"ops: team\"\n---\nBody\n"
        );
    }
}
