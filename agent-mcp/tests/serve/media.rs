//! A skill's media served over MCP: the official Python SDK as a client
//! (`tests/programs/serve_media_client.py`) calls a skill that answers with text, an image,
//! audio, a PDF and a URL, and checks each block: the text, `ImageContent` and `AudioContent`
//! whose base64 decodes to the bytes this side sent (given to the client in hex), the PDF as an
//! embedded resource with a blob at `eugene://media/NAME`, the URL as a resource link; and a
//! skill that asks the client's model about an image (sampling), whose callback checks the image's
//! bytes.

use agent_core::content::{Content, Media};
use agent_core::{Registry, SkillContext, SkillError, skill};
use agent_mcp::McpServer;
use agent_mcp::server::{CompletionRequest, client_of};
use bytes::Bytes;

use crate::python::run_script;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/programs/serve_media_client.py"
);

/// A tenth of a second of silence: 8 kHz, mono, 8-bit WAV.
fn wav() -> Bytes {
    let samples = [0x80u8; 800];
    let mut fmt = Vec::new();
    fmt.extend_from_slice(&1u16.to_le_bytes()); // PCM
    fmt.extend_from_slice(&1u16.to_le_bytes()); // mono
    fmt.extend_from_slice(&8000u32.to_le_bytes());
    fmt.extend_from_slice(&8000u32.to_le_bytes());
    fmt.extend_from_slice(&1u16.to_le_bytes());
    fmt.extend_from_slice(&8u16.to_le_bytes());
    let mut body = b"WAVEfmt ".to_vec();
    body.extend_from_slice(&(fmt.len() as u32).to_le_bytes());
    body.extend_from_slice(&fmt);
    body.extend_from_slice(b"data");
    body.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    body.extend_from_slice(&samples);
    let mut wav = b"RIFF".to_vec();
    wav.extend_from_slice(&(body.len() as u32).to_le_bytes());
    wav.extend_from_slice(&body);
    Bytes::from(wav)
}

const PDF: &[u8] = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n";

/// Draws the quarter's chart, with its report and recording.
#[skill(read_only, register = false)]
async fn draw() -> Result<Content, SkillError> {
    Ok(Content::text("Q3:")
        .with(Media::new("image/png", agent_core::content::tiny_png()).named("chart.png"))
        .with(Media::new("audio/wav", wav()))
        .with(Media::new("application/pdf", PDF).named("q3 report.pdf"))
        .with(Media::url("https://example.com/q3.png", "image/png"))
        .with("That is all."))
}

/// Asks the client's model what the tiny PNG shows.
#[skill(read_only, register = false)]
async fn look(ctx: &SkillContext) -> Result<String, SkillError> {
    let picture = Media::new("image/png", agent_core::content::tiny_png());
    let request = CompletionRequest::new(20)
        .user("What is in this picture?")
        .attach(picture);
    let answer = client_of(ctx)?.sample(&request).await?;
    Ok(format!("the model saw: {}", answer.text))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_reads_a_skills_image_audio_pdf_and_url_and_samples_with_an_image() {
    let mut registry = Registry::new();
    registry.add(DrawSkill).add(LookSkill);
    let png = hex(&agent_core::content::tiny_png());
    let wav = hex(&wav());
    let pdf = hex(PDF);
    run_script(
        SCRIPT,
        &["--stdio", &png, &wav, &pdf],
        Some(McpServer::new(registry)),
    )
    .await;
}
