//! How a server's tools become skills ([`Make`]): the settings an
//! [`McpSkills`](super::McpSkills) was given, kept so that a tool list read again becomes skills
//! the same way as the first.

use std::sync::Arc;
use std::time::Duration;

use agent_core::DynSkill;
use agent_core::content::MediaLimits;
use rmcp::model::Tool;

use super::connection::Connection;
use super::resource_skill::ReadResourceSkill;
use super::skill::McpSkill;

/// The name of the skill that reads resources, before the prefix.
const READ_RESOURCE: &str = "read_resource";

/// How the tools of one [`McpSkills`](super::McpSkills) become skills.
#[derive(Clone, Debug)]
pub(super) struct Make {
    pub(super) prefix: String,
    pub(super) call_timeout: Duration,
    pub(super) defer: bool,
    /// The URIs the `read_resource` skill lists, when there is one.
    pub(super) resource_skill: Option<Vec<String>>,
    /// What the media of results is checked against.
    pub(super) media_limits: MediaLimits,
}

impl Make {
    /// The names the skills of `tools` get (and `read_resource`'s, when there is one).
    pub(super) fn names(&self, tools: &[Tool]) -> Vec<String> {
        let mut names: Vec<String> = tools
            .iter()
            .map(|tool| skill_name(&self.prefix, &tool.name))
            .collect();
        if self.resource_skill.is_some() {
            names.push(skill_name(&self.prefix, READ_RESOURCE));
        }
        names
    }

    /// One skill for each of `tools` (and `read_resource`, when there is one, listing
    /// `uris`), calling through `connection`.
    pub(super) fn skills(
        &self,
        connection: &Arc<Connection>,
        tools: &[Tool],
        uris: &[String],
    ) -> Vec<Arc<dyn DynSkill>> {
        let server = connection
            .server_info()
            .map(|info| info.name)
            .unwrap_or_default();
        let resource_skill = self.resource_skill.is_some().then(|| {
            Arc::new(ReadResourceSkill::new(
                connection.clone(),
                skill_name(&self.prefix, READ_RESOURCE),
                uris,
                self.call_timeout,
                self.media_limits,
            )) as Arc<dyn DynSkill>
        });
        tools
            .iter()
            .map(|tool| {
                Arc::new(McpSkill::new(
                    connection.clone(),
                    tool,
                    skill_name(&self.prefix, &tool.name),
                    self.call_timeout,
                    self.defer,
                    &server,
                    self.media_limits,
                )) as Arc<dyn DynSkill>
            })
            .chain(resource_skill)
            .collect()
    }
}

/// The name a remote tool gets as a skill: `prefix` + `tool`, every character outside
/// `a-z A-Z 0-9 _ -` replaced by `_`, cut at 64 bytes.
///
/// ```
/// assert_eq!(agent_mcp::client::skill_name("gh_", "repos.create issue"), "gh_repos_create_issue");
/// ```
pub fn skill_name(prefix: &str, tool: &str) -> String {
    let mut name: String = prefix
        .chars()
        .chain(tool.chars())
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    name.truncate(64);
    name
}
