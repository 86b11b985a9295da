//! The agent card: what an A2A agent says about itself at
//! [`AGENT_CARD_PATH`](crate::types::AGENT_CARD_PATH) — name, description, where and how to
//! reach it, what it can do, how to authenticate.
//!
//! The server builds its card from the runtime's registry ([`AgentCard::for_registry`]): one
//! card skill per registered skill, `capabilities.streaming = true`, one JSON-RPC interface, and
//! a bearer security scheme required on every call. The client reads a card and picks its
//! JSON-RPC 1.0 interface ([`AgentCard::jsonrpc_url`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use agent_core::Registry;

use crate::types::{JSONRPC_BINDING, PROTOCOL_VERSION};

/// The name of the security scheme the server's card declares.
pub const BEARER_SCHEME: &str = "bearer";

/// An agent card (A2A 1.0). Fields this crate does not use (signatures, extensions, OAuth flows)
/// are kept as JSON in [`AgentCard::security_schemes`] or ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// The agent's name.
    pub name: String,
    /// What it does, for people and models.
    #[serde(default)]
    pub description: String,
    /// Where it is reached, and with which binding and protocol version.
    #[serde(default)]
    pub supported_interfaces: Vec<AgentInterface>,
    /// The agent's own version.
    #[serde(default)]
    pub version: String,
    /// What the agent supports.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// How a client may authenticate, by scheme name (ProtoJSON of `SecurityScheme`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub security_schemes: BTreeMap<String, Value>,
    /// Which schemes a client must use (ProtoJSON of `SecurityRequirement`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security_requirements: Vec<Value>,
    /// Media types the agent reads.
    #[serde(default)]
    pub default_input_modes: Vec<String>,
    /// Media types the agent writes.
    #[serde(default)]
    pub default_output_modes: Vec<String>,
    /// What the agent can do.
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
}

/// One way to reach an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// The endpoint.
    pub url: String,
    /// `JSONRPC`, `GRPC`, `HTTP+JSON` or a custom binding.
    pub protocol_binding: String,
    /// The A2A version, `Major.Minor`.
    #[serde(default)]
    pub protocol_version: String,
}

/// What an agent supports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Streams (`SendStreamingMessage`, `SubscribeToTask`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// An extended card for authenticated clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_agent_card: Option<bool>,
}

/// One thing an agent can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Keywords.
    #[serde(default)]
    pub tags: Vec<String>,
}

impl AgentCard {
    /// The card of an agent named `name` that runs `registry`'s skills, reached over JSON-RPC at
    /// `url`, with a bearer token required.
    pub fn for_registry(name: &str, description: &str, url: &str, registry: &Registry) -> Self {
        let skills = registry
            .definitions()
            .into_iter()
            .map(|definition| {
                let read_only = registry
                    .metadata(&definition.name)
                    .is_some_and(|m| m.is_read_only);
                AgentSkill {
                    id: definition.name.clone(),
                    name: definition.name,
                    description: definition.description,
                    tags: vec![if read_only { "read-only" } else { "tool" }.to_owned()],
                }
            })
            .collect();
        AgentCard {
            name: name.to_owned(),
            description: description.to_owned(),
            supported_interfaces: vec![AgentInterface {
                url: url.to_owned(),
                protocol_binding: JSONRPC_BINDING.to_owned(),
                protocol_version: PROTOCOL_VERSION.to_owned(),
            }],
            version: env!("CARGO_PKG_VERSION").to_owned(),
            capabilities: AgentCapabilities {
                streaming: Some(true),
                push_notifications: Some(false),
                extended_agent_card: Some(false),
            },
            security_schemes: BTreeMap::from([(
                BEARER_SCHEME.to_owned(),
                json!({"httpAuthSecurityScheme": {"scheme": "Bearer"}}),
            )]),
            security_requirements: vec![json!({"schemes": {BEARER_SCHEME: {"list": []}}})],
            default_input_modes: vec!["text/plain".into(), "application/json".into()],
            default_output_modes: vec!["text/plain".into()],
            skills,
        }
    }

    /// The URL of the card's JSON-RPC interface for A2A 1.x, or an error naming what it offers.
    pub fn jsonrpc_url(&self) -> Result<&str, String> {
        self.supported_interfaces
            .iter()
            .find(|i| {
                i.protocol_binding.eq_ignore_ascii_case(JSONRPC_BINDING)
                    && i.protocol_version.split('.').next() == Some("1")
            })
            .map(|i| i.url.as_str())
            .ok_or_else(|| {
                let offered: Vec<String> = self
                    .supported_interfaces
                    .iter()
                    .map(|i| format!("{} {} at {}", i.protocol_binding, i.protocol_version, i.url))
                    .collect();
                format!(
                    "the agent `{}` offers no JSON-RPC interface for A2A 1.x (it offers: {})",
                    self.name,
                    if offered.is_empty() {
                        "nothing".to_owned()
                    } else {
                        offered.join(", ")
                    }
                )
            })
    }
}
