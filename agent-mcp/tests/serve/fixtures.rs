//! The server every test of this binary talks to: skills that elicit and sample, an Agent Skills
//! folder on disk, a prompt.

use std::path::Path;
use std::time::Duration;

use agent_core::{Registry, SkillContext, SkillError, skill};
use agent_mcp::McpServer;
use agent_mcp::rmcp::model::{PromptMessage, Role};
use agent_mcp::server::{ClientAnswer, CompletionRequest, PromptArg, client_of};
use serde_json::json;

/// How long the test server waits for the client's answer: short, for `ask_forever`; the other
/// skills' clients answer at once.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(3);

/// Ask the user their name.
#[skill(read_only, register = false)]
async fn ask_name(ctx: &SkillContext) -> Result<String, SkillError> {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Your name"}},
        "required": ["name"]
    });
    Ok(
        match client_of(ctx)?.elicit("Who are you?", schema).await? {
            ClientAnswer::Accept(content) => {
                let name = content["name"].as_str().unwrap_or("(not a string)");
                format!("hello, {name}")
            }
            ClientAnswer::Decline => "you declined to say".into(),
            ClientAnswer::Cancel => "you dismissed the question".into(),
        },
    )
}

/// Ask the client's model.
///
/// # Arguments
/// * `question` - What to ask.
#[skill(read_only, register = false)]
async fn ask_model(ctx: &SkillContext, question: String) -> Result<String, SkillError> {
    let request = CompletionRequest::new(50)
        .system("Answer in three words.")
        .user(question);
    let answer = client_of(ctx)?.sample(&request).await?;
    Ok(format!(
        "{} said: {} ({})",
        answer.model,
        answer.text,
        answer.stop_reason.as_deref().unwrap_or("no stop reason")
    ))
}

/// Ask a question nobody answers.
#[skill(read_only, register = false)]
async fn ask_forever(ctx: &SkillContext) -> Result<String, SkillError> {
    let schema = json!({"type": "object", "properties": {"x": {"type": "string"}}});
    let answer = client_of(ctx)?.elicit("Take your time.", schema).await?;
    Ok(format!("answered: {answer:?}"))
}

/// Writes the Agent Skill `greet` under `dir`: `SKILL.md`, a text file and a binary one.
pub fn write_agent_skills(dir: &Path) {
    let greet = dir.join("greet");
    std::fs::create_dir_all(greet.join("references")).unwrap();
    std::fs::create_dir_all(greet.join("assets")).unwrap();
    std::fs::write(
        greet.join("SKILL.md"),
        "---\nname: greet\ndescription: Greet people by name.\n---\nSay hello, then the name.\n",
    )
    .unwrap();
    std::fs::write(greet.join("references/names.md"), "Ada\nGrace\n").unwrap();
    std::fs::write(greet.join("assets/logo.bin"), [0u8, 1, 255, 128]).unwrap();
}

/// The registry of the test server, with the Agent Skills found in `skills_dir`.
pub fn registry(skills_dir: &Path) -> Registry {
    let mut registry = Registry::new();
    registry
        .add(AskNameSkill)
        .add(AskModelSkill)
        .add(AskForeverSkill);
    let loaded = agent_std_tools::AgentSkills::load_strict(skills_dir).expect("the skills load");
    registry
        .add_agent_skills(loaded)
        .expect("the skills are added");
    registry
}

/// The test server: [`registry`], the prompt `review`, the short [`CLIENT_TIMEOUT`].
pub fn server(skills_dir: &Path) -> McpServer {
    McpServer::new(registry(skills_dir))
        .client_request_timeout(CLIENT_TIMEOUT)
        .prompt(
            "review",
            "Review a file.",
            [
                PromptArg::required("path", "The file to review"),
                PromptArg::optional("focus", "What to look at"),
            ],
            |args| {
                let focus = args.get("focus").map_or("anything", String::as_str);
                Ok(vec![PromptMessage::new_text(
                    Role::User,
                    format!("Review {}; look at {focus}.", args["path"]),
                )])
            },
        )
}
