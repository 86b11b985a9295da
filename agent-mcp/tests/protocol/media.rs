//! Media through MCP with eugene on both sides: a skill's text, image and PDF served as MCP
//! content and consumed by `McpSkills` as the same parts, in order (the PDF named by the URI it
//! was served at); a skill with an output schema cannot answer with media; the client's bound
//! refuses a served image past its limit.

use agent_core::content::{Content, Media, MediaLimits, Part, tiny_png};
use agent_core::{Registry, SkillContext, SkillError, SkillOutput, ToolCall, ToolResult, skill};
use agent_mcp::server::to_call_tool_result_for;
use agent_mcp::{McpServer, McpSkills};
use rmcp::ServiceExt;
use serde_json::json;

const PDF: &[u8] = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n";

/// Draws the chart and attaches the report.
#[skill(read_only, register = false)]
async fn draw() -> Result<Content, SkillError> {
    Ok(Content::text("The chart:")
        .with(Media::new("image/png", tiny_png()).named("chart.png"))
        .with("and the report:")
        .with(Media::new("application/pdf", PDF).named("report.pdf")))
}

async fn consume(server: McpServer, limits: MediaLimits) -> McpSkills {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("the server starts");
        let _ = running.waiting().await;
    });
    McpSkills::connect_transport("media", client_end)
        .await
        .expect("connects")
        .with_media_limits(limits)
}

async fn call_draw(limits: MediaLimits) -> Result<SkillOutput, SkillError> {
    let mut served = Registry::new();
    served.add(DrawSkill);
    let skills = consume(McpServer::new(served), limits).await;
    let mut registry = Registry::new();
    skills.add_to(&mut registry).unwrap();
    let skill = registry.get("draw").expect("the tool is a skill");
    skill
        .start(&json!({}), &SkillContext::new("."))
        .unwrap()
        .await
}

#[tokio::test]
async fn a_served_skills_media_is_consumed_as_the_same_parts_in_order() {
    let output = call_draw(MediaLimits::default()).await.unwrap();
    let SkillOutput::Content(content) = output else {
        panic!("media comes back as content: {output:?}")
    };
    assert_eq!(
        content.parts,
        [
            Part::Text("The chart:".into()),
            Part::Media(Media::new("image/png", tiny_png())),
            Part::Text("and the report:".into()),
            Part::Media(Media::new("application/pdf", PDF).named("eugene://media/report.pdf")),
        ]
    );
}

#[tokio::test]
async fn a_served_image_past_the_clients_limit_is_refused() {
    let limits = MediaLimits {
        max_part_bytes: 32,
        ..MediaLimits::default()
    };
    let error = call_draw(limits).await.unwrap_err().to_string();
    assert!(error.contains("the tool's result was refused"), "{error}");
    assert!(
        error.contains("larger than the limit of 32 bytes"),
        "{error}"
    );
}

#[test]
fn media_cannot_follow_an_output_schema() {
    let call = ToolCall::new("c1", "draw", json!({}));
    let content = Content::text("x").with(Media::new("image/png", tiny_png()));
    let result = ToolResult::new(&call, Ok(SkillOutput::Content(content)));
    let schema = json!({"type": "object"});
    assert_eq!(
        to_call_tool_result_for(&result, Some(&schema)).is_error,
        Some(true)
    );
    let served = to_call_tool_result_for(&result, None);
    assert_eq!(served.is_error, Some(false));
    assert_eq!(served.content.len(), 2);
}
