//! Prompt templates an application serves with its registry (`prompts/list`, `prompts/get`):
//! [`McpServer::prompt`](super::McpServer::prompt).
//!
//! ```
//! use agent_core::Registry;
//! use agent_mcp::McpServer;
//! use agent_mcp::rmcp::model::{PromptMessage, Role};
//! use agent_mcp::server::PromptArg;
//!
//! let server = McpServer::new(Registry::new()).prompt(
//!     "review",
//!     "Review a file for bugs.",
//!     [PromptArg::required("path", "The file to review"), PromptArg::optional("focus", "What to look at")],
//!     |args| {
//!         let focus = args.get("focus").map_or("anything", String::as_str);
//!         Ok(vec![PromptMessage::new_text(
//!             Role::User,
//!             format!("Read {} with read_file and list the bugs you find; look at {focus}.", args["path"]),
//!         )])
//!     },
//! );
//! assert_eq!(server.prompts().len(), 1);
//! ```
//!
//! - `prompts/get` checks the arguments before the template runs: a required one missing, or
//!   one the prompt does not declare, is a JSON-RPC error `-32602` naming it (and the prompt's
//!   arguments); an unknown prompt is `-32602` listing the ones there are. A template's own
//!   `Err(text)` is `-32602` with that text.
//! - Arguments are strings, as MCP has them; at most [`MAX_PROMPT_ARGUMENT_BYTES`] each.
//! - The `prompts` capability is advertised only when the server has prompts, without
//!   `listChanged` (they are fixed when serving starts). A second prompt with a name already
//!   taken replaces the first.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
use serde_json::{Map, Value};

/// The most bytes one argument of `prompts/get` may have (64 KiB).
pub const MAX_PROMPT_ARGUMENT_BYTES: usize = 64 * 1024;

/// The arguments a template gets, by name: those the client gave (all declared, every
/// required one present).
pub type PromptArgs = BTreeMap<String, String>;

/// What renders a prompt: its messages for the arguments, or why they do not fit.
type Render = dyn Fn(&PromptArgs) -> Result<Vec<PromptMessage>, String> + Send + Sync;

/// One argument a prompt declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArg {
    name: String,
    description: String,
    required: bool,
}

impl PromptArg {
    /// An argument the client must give.
    pub fn required(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptArg {
            name: name.into(),
            description: description.into(),
            required: true,
        }
    }

    /// An argument the client may leave out.
    pub fn optional(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptArg {
            required: false,
            ..PromptArg::required(name, description)
        }
    }
}

/// A prompt template: its listing and its renderer.
#[derive(Clone)]
pub(crate) struct PromptTemplate {
    pub(crate) name: String,
    description: String,
    args: Vec<PromptArg>,
    render: Arc<Render>,
}

impl fmt::Debug for PromptTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptTemplate")
            .field("name", &self.name)
            .field("args", &self.args)
            .finish_non_exhaustive()
    }
}

impl PromptTemplate {
    pub(crate) fn new(
        name: String,
        description: String,
        args: Vec<PromptArg>,
        render: impl Fn(&PromptArgs) -> Result<Vec<PromptMessage>, String> + Send + Sync + 'static,
    ) -> Self {
        PromptTemplate {
            name,
            description,
            args,
            render: Arc::new(render),
        }
    }

    /// The prompt as `prompts/list` shows it.
    pub(crate) fn listing(&self) -> Prompt {
        let arguments = self
            .args
            .iter()
            .map(|arg| {
                PromptArgument::new(arg.name.clone())
                    .with_description(arg.description.clone())
                    .with_required(arg.required)
            })
            .collect();
        Prompt::new(
            self.name.clone(),
            Some(self.description.clone()),
            Some(arguments),
        )
    }

    /// The declared names, for messages.
    fn names(&self) -> String {
        if self.args.is_empty() {
            return "none".into();
        }
        self.args
            .iter()
            .map(|a| {
                format!(
                    "`{}`{}",
                    a.name,
                    if a.required { "" } else { " (optional)" }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Checks `arguments` and renders the prompt.
    fn get(&self, arguments: Option<Map<String, Value>>) -> Result<GetPromptResult, ErrorData> {
        let bad = |message: String| ErrorData::invalid_params(message, None);
        let mut args = PromptArgs::new();
        for (name, value) in arguments.unwrap_or_default() {
            if !self.args.iter().any(|a| a.name == name) {
                return Err(bad(format!(
                    "prompt `{}` has no argument `{name}`; its arguments: {}",
                    self.name,
                    self.names()
                )));
            }
            let Value::String(value) = value else {
                return Err(bad(format!(
                    "argument `{name}` of prompt `{}` must be a string",
                    self.name
                )));
            };
            if value.len() > MAX_PROMPT_ARGUMENT_BYTES {
                return Err(bad(format!(
                    "argument `{name}` of prompt `{}` has {} bytes, more than the \
                     {MAX_PROMPT_ARGUMENT_BYTES} allowed",
                    self.name,
                    value.len()
                )));
            }
            args.insert(name, value);
        }
        if let Some(missing) = self
            .args
            .iter()
            .find(|a| a.required && !args.contains_key(&a.name))
        {
            return Err(bad(format!(
                "prompt `{}` needs the argument `{}`; its arguments: {}",
                self.name,
                missing.name,
                self.names()
            )));
        }
        let messages = (self.render)(&args)
            .map_err(|reason| bad(format!("prompt `{}`: {reason}", self.name)))?;
        Ok(GetPromptResult::new(messages).with_description(self.description.clone()))
    }
}

/// The prompts of a server, by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Prompts {
    templates: BTreeMap<String, PromptTemplate>,
}

impl Prompts {
    /// Adds `template`, replacing one of the same name.
    pub(crate) fn add(&mut self, template: PromptTemplate) {
        self.templates.insert(template.name.clone(), template);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }

    /// Every prompt as `prompts/list` shows it, by name.
    pub(crate) fn list(&self) -> Vec<Prompt> {
        self.templates
            .values()
            .map(PromptTemplate::listing)
            .collect()
    }

    /// The answer to `prompts/get`.
    pub(crate) fn get(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<GetPromptResult, ErrorData> {
        match self.templates.get(name) {
            Some(template) => template.get(arguments),
            None => Err(ErrorData::invalid_params(
                format!(
                    "no prompt `{name}`; prompts: {}",
                    self.templates
                        .keys()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            )),
        }
    }
}
