//! The spans a run makes, named and filled in after the OpenTelemetry GenAI semantic
//! conventions: `invoke_agent` for each time a run is driven, `chat` for each model call.
//! (`execute_tool` is agent-core's, around each skill call.)
//!
//! The names an exporter shows come from `otel.name` (`invoke_agent researcher`,
//! `chat claude-sonnet-4-5`), the `tracing` names stay short (`invoke_agent`, `chat`) for
//! filters. Attributes only the answer knows are recorded once it is in; everything costs nothing
//! when no subscriber wants the spans (their fields are never computed).

use agent_core::content::{Media, Part};
use agent_llm::{ChatRequest, ChatResponse, Cost, Message, ProviderError, Role, StopReason};
use tracing::Span;
use tracing::field::Empty;

use crate::runtime::step::run_state::RunState;
use crate::runtime::{AgentError, AgentRuntime};
use crate::trace;

/// The convention's name of the provider `name` (the `gen_ai.provider.name` values), or `name`
/// itself for providers it has none for (`mock`, your own).
pub(in crate::runtime) fn provider_name(name: &str) -> &str {
    match name {
        "openai-responses" => "openai",
        "gemini" => "gcp.gemini",
        other => other,
    }
}

/// The agent a run of `rt` is, when it has a name: the skill or handoff name it runs under.
fn agent_name<'a>(rt: &'a AgentRuntime, state: &'a RunState) -> Option<&'a str> {
    state
        .handoffs
        .last()
        .or(rt.ancestry.path.last())
        .map(String::as_str)
}

/// The `invoke_agent` span of one drive of a run in `state`: a child of the span the state's
/// `traceparent` names when the run started elsewhere (another process, an earlier drive), so
/// a paused and resumed run is one trace. The first drive keeps its own `traceparent` in the
/// state.
pub(in crate::runtime) fn invoke_agent(rt: &AgentRuntime, state: &mut RunState) -> Span {
    let span = tracing::info_span!(
        "invoke_agent",
        "otel.name" = Empty,
        "otel.kind" = "internal",
        "otel.status_code" = Empty,
        "gen_ai.operation.name" = "invoke_agent",
        "gen_ai.provider.name" = provider_name(rt.settings.provider.name()),
        "gen_ai.agent.name" = Empty,
        "gen_ai.request.model" = rt.settings.provider.model(),
        "gen_ai.conversation.id" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "gen_ai.usage.cost" = Empty,
        "error.type" = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    match agent_name(rt, state) {
        Some(agent) => {
            span.record("otel.name", format!("invoke_agent {agent}"));
            span.record("gen_ai.agent.name", agent);
        }
        None => {
            span.record("otel.name", "invoke_agent");
        }
    }
    if let Some(conversation) = trace::conversation() {
        span.record("gen_ai.conversation.id", conversation);
    }
    // A run nested in a call (an agent used as a skill) is a child of that call's span, in
    // whichever process runs it: only an outermost run is continued under the first drive.
    if rt.ancestry.path.is_empty() {
        match &state.trace_parent {
            Some(parent) => trace::set_parent(&span, parent),
            None => state.trace_parent = trace::traceparent(&span),
        }
    }
    span
}

/// Records what a drive of the run came to on its `invoke_agent` span: the run's tokens and cost
/// so far, and the error it failed with.
pub(in crate::runtime) fn agent_done(span: &Span, state: &RunState, error: Option<&AgentError>) {
    if span.is_disabled() {
        return;
    }
    let usage = &state.usage;
    // The conventions' input tokens are every token of the prompt, cached or not.
    span.record("gen_ai.usage.input_tokens", count(usage.prompt_tokens()));
    span.record("gen_ai.usage.output_tokens", count(usage.output_tokens));
    record_cost(span, &state.cost);
    if let Some(error) = error {
        failed(span, error);
    }
}

/// The `chat` span of a model call asked `request`. Its `gen_ai.provider.name` is recorded
/// once the call ended ([`chat_done`], [`chat_unanswered`]): the provider that answered, which a
/// failover knows only then.
pub(in crate::runtime) fn chat(rt: &AgentRuntime, request: &ChatRequest<'_>) -> Span {
    let span = tracing::info_span!(
        "chat",
        "otel.name" = Empty,
        "otel.kind" = "client",
        "otel.status_code" = Empty,
        "gen_ai.operation.name" = "chat",
        "gen_ai.provider.name" = Empty,
        "gen_ai.request.model" = rt.settings.provider.model(),
        "gen_ai.request.max_tokens" = i64::from(request.max_tokens),
        "gen_ai.request.temperature" = request.temperature.map(f64::from),
        "gen_ai.response.model" = Empty,
        "gen_ai.response.id" = Empty,
        "gen_ai.response.finish_reasons" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "gen_ai.usage.cache_read.input_tokens" = Empty,
        "gen_ai.usage.cache_creation.input_tokens" = Empty,
        "gen_ai.usage.reasoning.output_tokens" = Empty,
        "gen_ai.usage.cost" = Empty,
        "gen_ai.system_instructions" = Empty,
        "gen_ai.input.messages" = Empty,
        "gen_ai.output.messages" = Empty,
        "error.type" = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    span.record(
        "otel.name",
        match rt.settings.provider.model() {
            Some(model) => format!("chat {model}"),
            None => "chat".to_owned(),
        },
    );
    if trace::records_content() {
        if let Some(system) = request.system {
            let parts = serde_json::json!([{"type": "text", "content": system}]);
            span.record("gen_ai.system_instructions", parts.to_string());
        }
        let messages: Vec<_> = request.messages.iter().map(message).collect();
        span.record(
            "gen_ai.input.messages",
            serde_json::Value::Array(messages).to_string(),
        );
    }
    span
}

/// Records the answer of a model call on its `chat` span, with what it cost: the provider that
/// answered ([`ChatResponse::provider`], else the runtime's) and the model.
pub(in crate::runtime) fn chat_done(
    rt: &AgentRuntime,
    span: &Span,
    response: &ChatResponse,
    cost: &Cost,
) {
    if span.is_disabled() {
        return;
    }
    let provider = response
        .provider
        .as_deref()
        .unwrap_or(rt.settings.provider.name());
    span.record("gen_ai.provider.name", provider_name(provider));
    if let Some(model) = &response.model {
        span.record("gen_ai.response.model", model.as_str());
    }
    if let Some(id) = &response.id {
        span.record("gen_ai.response.id", id.as_str());
    }
    let reason = finish_reason(&response.stop_reason);
    span.record(
        "gen_ai.response.finish_reasons",
        serde_json::json!([reason]).to_string(),
    );
    let usage = &response.usage;
    // The conventions' input tokens are every token of the prompt, cached or not.
    span.record("gen_ai.usage.input_tokens", count(usage.prompt_tokens()));
    span.record("gen_ai.usage.output_tokens", count(usage.output_tokens));
    span.record(
        "gen_ai.usage.cache_read.input_tokens",
        count(usage.cache_read_tokens),
    );
    span.record(
        "gen_ai.usage.cache_creation.input_tokens",
        count(usage.cache_write_tokens),
    );
    if usage.reasoning_tokens > 0 {
        span.record(
            "gen_ai.usage.reasoning.output_tokens",
            count(usage.reasoning_tokens),
        );
    }
    record_cost(span, cost);
    if trace::records_content() {
        let mut out = message(&response.message);
        out["finish_reason"] = reason.into();
        span.record(
            "gen_ai.output.messages",
            serde_json::json!([out]).to_string(),
        );
    }
}

/// Records a model call that got no answer on its `chat` span: the runtime's provider, and the
/// failure (none when the run was cancelled).
pub(in crate::runtime) fn chat_unanswered(
    rt: &AgentRuntime,
    span: &Span,
    error: Option<&AgentError>,
) {
    if span.is_disabled() {
        return;
    }
    span.record(
        "gen_ai.provider.name",
        provider_name(rt.settings.provider.name()),
    );
    if let Some(error) = error {
        failed(span, error);
    }
}

/// Records a failure on `span`: `error.type`, and the status an exporter shows.
pub(in crate::runtime) fn failed(span: &Span, error: &AgentError) {
    if span.is_disabled() {
        return;
    }
    let kind = match error {
        AgentError::Provider(error) => provider_error_type(error),
        AgentError::Config(_) => "config".into(),
        AgentError::Resume(_) => "resume".into(),
        AgentError::Session(_) => "session".into(),
        AgentError::Sealed(_) => "sealed".into(),
    };
    span.record("error.type", kind);
    span.record("otel.status_code", "ERROR");
}

/// A token count as a signed integer: exporters send `u64` fields as text, the conventions want
/// an int.
fn count(tokens: u64) -> i64 {
    i64::try_from(tokens).unwrap_or(i64::MAX)
}

/// `gen_ai.usage.cost` in US dollars, when every call of it was priced (none at all when one
/// was not: an unpriced call is not free). The conventions have no cost attribute yet; the
/// name is the one the issue of this crate chose, beside the `gen_ai.usage.*` token counts.
fn record_cost(span: &Span, cost: &Cost) {
    if cost.is_complete() {
        span.record("gen_ai.usage.cost", cost.total().as_dollars());
    }
}

/// The conventions' finish reason for `reason`.
fn finish_reason(reason: &StopReason) -> &str {
    match reason {
        StopReason::EndTurn | StopReason::StopSequence(_) => "stop",
        StopReason::ToolUse => "tool_call",
        StopReason::MaxTokens => "length",
        StopReason::Refusal => "content_filter",
        StopReason::Other(other) => other,
    }
}

/// `error.type` of a failed call: the HTTP status of an API error, else what went wrong.
fn provider_error_type(error: &ProviderError) -> String {
    match error {
        ProviderError::Api { status, .. } => status.to_string(),
        ProviderError::Connect { .. } => "connect".into(),
        ProviderError::Timeout { .. } => "timeout".into(),
        ProviderError::Stream { .. } => "stream".into(),
        ProviderError::Decode { .. } => "decode".into(),
        ProviderError::Config(_) => "config".into(),
        _ => "_OTHER".into(),
    }
}

/// `message` in the conventions' message form: a role and its parts (text, tool calls, a tool
/// call's result).
fn message(message: &Message) -> serde_json::Value {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut parts = Vec::new();
    match &message.tool_call_id {
        Some(id) => parts.push(serde_json::json!({
            "type": "tool_call_response", "id": id.as_ref(), "response": message.content,
        })),
        None if !message.content.is_empty() => {
            parts.push(serde_json::json!({"type": "text", "content": message.content}))
        }
        None => {}
    }
    for part in &message.parts {
        parts.push(match part {
            Part::Text(text) => serde_json::json!({"type": "text", "content": text}),
            Part::Media(media) => media_reference(media),
        });
    }
    for call in &message.tool_calls {
        parts.push(serde_json::json!({
            "type": "tool_call", "id": call.id.as_ref(), "name": call.name,
            "arguments": call.arguments,
        }));
    }
    serde_json::json!({"role": role, "parts": parts})
}

/// A media part as a span records it: a reference, never its bytes. A URL is the GenAI
/// conventions' `uri` part; bytes are a `blob_ref` with the modality, type, size and name (the
/// conventions' `blob` would carry the base64 itself, which no span should).
fn media_reference(media: &Media) -> serde_json::Value {
    let mut part = match media.url_str() {
        // Without its query and fragment: a signed URL's signature is a credential.
        Some(url) => serde_json::json!({"type": "uri", "uri": url.split(['?', '#']).next()}),
        None => serde_json::json!({"type": "blob_ref", "size": media.len()}),
    };
    part["modality"] = media.kind().as_str().into();
    part["mime_type"] = (&*media.media_type).into();
    if let Some(name) = &media.name {
        part["name"] = (&**name).into();
    }
    part
}
