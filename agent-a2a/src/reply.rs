//! What a remote agent answered ([`Reply`]): a task (ended, or waiting for input) or a message,
//! and what the answer says: its text and its files.

use crate::types::{Message, Part, Task, TaskState, parts_text};

/// How a task sent with [`RemoteAgent::ask`](crate::RemoteAgent::ask) stands when the call returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The agent answered with a task; it ended, or waits for input.
    Task(Task),
    /// The agent answered with a message, without a task.
    Message(Message),
}

impl Reply {
    /// The task's state (`Completed` for a direct message).
    pub fn state(&self) -> TaskState {
        match self {
            Reply::Task(task) => task.status.state,
            Reply::Message(_) => TaskState::Completed,
        }
    }

    /// The answer's text: the task's artifacts' text, else its status message's, else its last
    /// agent message's; a direct message's text.
    pub fn text(&self) -> String {
        match self {
            Reply::Message(message) => message.text(),
            Reply::Task(task) => {
                let artifacts: Vec<String> = task
                    .artifacts
                    .iter()
                    .map(|a| parts_text(&a.parts))
                    .filter(|t| !t.is_empty())
                    .collect();
                if !artifacts.is_empty() {
                    return artifacts.join("\n");
                }
                if let Some(message) = &task.status.message {
                    return message.text();
                }
                task.history
                    .iter()
                    .rev()
                    .find(|m| m.role == crate::types::Role::Agent)
                    .map(Message::text)
                    .unwrap_or_default()
            }
        }
    }
}

impl Reply {
    /// The answer's file parts (bytes or URL): the task's artifacts' if any has one, else its
    /// status message's, else its last agent message's; a direct message's.
    pub fn file_parts(&self) -> Vec<&Part> {
        match self {
            Reply::Message(message) => files(&message.parts),
            Reply::Task(task) => {
                let artifacts: Vec<&Part> = task
                    .artifacts
                    .iter()
                    .flat_map(|a| files(&a.parts))
                    .collect();
                if !artifacts.is_empty() {
                    return artifacts;
                }
                if let Some(message) = &task.status.message {
                    let status = files(&message.parts);
                    if !status.is_empty() {
                        return status;
                    }
                }
                task.history
                    .iter()
                    .rev()
                    .find(|m| m.role == crate::types::Role::Agent)
                    .map(|m| files(&m.parts))
                    .unwrap_or_default()
            }
        }
    }
}

/// The file parts of `parts`.
fn files(parts: &[Part]) -> Vec<&Part> {
    parts
        .iter()
        .filter(|p| p.raw.is_some() || p.url.is_some())
        .collect()
}
