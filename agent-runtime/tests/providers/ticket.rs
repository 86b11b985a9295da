//! The typed value every provider's typed runs ask for: a ticket, its JSON as the model answers
//! it, and the value the run must end with.

use agent_core::{schemars, serde};
use serde_json::{Value, json};

/// What a typed run asks the model for.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
#[serde(crate = "agent_core::serde")]
#[schemars(crate = "agent_core::schemars")]
pub struct Ticket {
    pub title: String,
    pub priority: u8,
    pub labels: Option<Vec<String>>,
}

/// The ticket as the model answers it.
pub fn answer() -> Value {
    json!({"title": "Login fails", "priority": 1, "labels": ["auth"]})
}

/// The ticket the run must end with.
pub fn ticket() -> Ticket {
    Ticket {
        title: "Login fails".into(),
        priority: 1,
        labels: Some(vec!["auth".into()]),
    }
}
