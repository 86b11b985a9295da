//! A small MCP server written with rmcp alone (no eugene), over stdio: the "someone else's
//! server" the tests consume through `McpSkills`, and an example of what `McpSkills` handles.
//!
//! | tool | annotations | does |
//! |---|---|---|
//! | `echo` | `readOnlyHint: true` | returns `text` |
//! | `add` | none | returns `a + b` |
//! | `text.upper` | `destructiveHint: false` | upper-cases `text` |
//! | `fail` | `readOnlyHint: true` | answers with an `isError` result |
//! | `hang` | `readOnlyHint: true` | never answers |
//! | `crash` | `destructiveHint: true` | exits the process with status 3 |

#![allow(dead_code)] // tests include this file as a module and use only some of it

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};

/// Arguments of `echo` and `text.upper`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct TextArgs {
    /// The text.
    pub text: String,
}

/// Arguments of `add`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// The first number.
    pub a: i64,
    /// The second number.
    pub b: i64,
}

/// The server.
#[derive(Clone)]
pub struct EchoServer {
    tool_router: ToolRouter<EchoServer>,
}

impl Default for EchoServer {
    fn default() -> Self {
        EchoServer {
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_router]
impl EchoServer {
    /// Repeat the text.
    #[tool(annotations(read_only_hint = true))]
    async fn echo(&self, Parameters(args): Parameters<TextArgs>) -> String {
        args.text
    }

    /// Add two integers.
    #[tool]
    async fn add(&self, Parameters(args): Parameters<AddArgs>) -> String {
        (args.a + args.b).to_string()
    }

    /// Upper-case the text.
    #[tool(name = "text.upper", annotations(destructive_hint = false))]
    async fn upper(&self, Parameters(args): Parameters<TextArgs>) -> String {
        args.text.to_uppercase()
    }

    /// Always fails, as a tool result.
    #[tool(annotations(read_only_hint = true))]
    async fn fail(&self) -> Result<CallToolResult, ErrorData> {
        Ok(CallToolResult::error(vec![ContentBlock::text(
            "the disk is on fire",
        )]))
    }

    /// Never answers.
    #[tool(annotations(read_only_hint = true))]
    async fn hang(&self) -> String {
        std::future::pending::<()>().await;
        unreachable!()
    }

    /// Exits the server process.
    #[tool(annotations(destructive_hint = true))]
    async fn crash(&self) -> String {
        std::process::exit(3)
    }
}

#[tool_handler]
impl ServerHandler for EchoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let running = EchoServer::default()
        .serve(rmcp::transport::stdio())
        .await?;
    running.waiting().await?;
    Ok(())
}
