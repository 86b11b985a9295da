//! The JSON-RPC 2.0 checks a POSTed body gets before it reaches rmcp, so that a bad message is
//! answered with the error code the JSON-RPC specification names for it. rmcp alone answers
//! malformed JSON with `415 Unsupported Media Type`, and a known method whose params have the
//! wrong shape (a `tools/call` whose `arguments` is no object) with −32601 "method not found",
//! because such a request falls through to its catch-all custom request.
//!
//! | the body | answer |
//! | --- | --- |
//! | not JSON | `400`, −32700 Parse error, `id: null` |
//! | JSON but no single JSON-RPC 2.0 message (a batch, a number, `"jsonrpc": "1.0"`, an `id` that is an object) | `400`, −32600 Invalid Request |
//! | a request for a method MCP defines, with params of the wrong shape | `400`, −32602 Invalid params, with the request's id |
//!
//! Everything else goes on to rmcp unchanged (the bytes are handed on as they came).

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};
use rmcp::model::{
    CallToolRequestMethod, CancelTaskMethod, ClientJsonRpcMessage, ClientRequest,
    CompleteRequestMethod, ConstString, DiscoverRequestMethod, GetPromptRequestMethod,
    GetSkillRequestMethod, GetTaskMethod, InitializeResultMethod, JsonRpcMessage,
    ListPromptsRequestMethod, ListResourceTemplatesRequestMethod, ListResourcesRequestMethod,
    ListSkillsRequestMethod, ListToolsRequestMethod, PingRequestMethod,
    ReadResourceDirectoryRequestMethod, ReadResourceRequestMethod, SetLevelRequestMethod,
    SubscribeRequestMethod, SubscriptionsListenRequestMethod, UnsubscribeRequestMethod,
    UpdateTaskMethod,
};
use serde_json::{Map, Value, json};

/// JSON-RPC 2.0: invalid JSON was received.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0: the JSON sent is not a valid request object.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC 2.0: invalid method parameters.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC 2.0's range for implementation-defined server errors; the code this server
/// answers an `initialize` with when it is at its session limit.
pub(crate) const SERVER_BUSY: i64 = -32000;

/// The methods a client may call that rmcp parses into a typed request. A request for one of
/// these that rmcp could only parse as a custom request had params of the wrong shape.
const TYPED_METHODS: &[&str] = &[
    InitializeResultMethod::VALUE,
    DiscoverRequestMethod::VALUE,
    PingRequestMethod::VALUE,
    CompleteRequestMethod::VALUE,
    SetLevelRequestMethod::VALUE,
    GetPromptRequestMethod::VALUE,
    ListPromptsRequestMethod::VALUE,
    ListResourcesRequestMethod::VALUE,
    ListResourceTemplatesRequestMethod::VALUE,
    ReadResourceRequestMethod::VALUE,
    SubscriptionsListenRequestMethod::VALUE,
    SubscribeRequestMethod::VALUE,
    UnsubscribeRequestMethod::VALUE,
    CallToolRequestMethod::VALUE,
    ListToolsRequestMethod::VALUE,
    GetTaskMethod::VALUE,
    UpdateTaskMethod::VALUE,
    CancelTaskMethod::VALUE,
    ListSkillsRequestMethod::VALUE,
    GetSkillRequestMethod::VALUE,
    ReadResourceDirectoryRequestMethod::VALUE,
];

/// What the HTTP layer needs to know of a message that passed.
#[derive(Debug)]
pub(crate) struct Checked {
    /// Whether it is an `initialize` request (one that makes a session).
    pub(crate) is_initialize: bool,
    /// Its id, for an answer the HTTP layer gives itself (`null` for a notification).
    pub(crate) id: Value,
}

/// A JSON-RPC error to answer instead of handing the message on.
#[derive(Debug, PartialEq)]
pub(crate) struct Rejected {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) id: Value,
}

impl Rejected {
    fn new(code: i64, message: impl Into<String>, id: Value) -> Self {
        Rejected {
            code,
            message: message.into(),
            id,
        }
    }

    /// The `400 Bad Request` that carries this error.
    pub(crate) fn into_response(self) -> Response<BoxBody<Bytes, Infallible>> {
        error_response(StatusCode::BAD_REQUEST, self.id, self.code, &self.message)
    }
}

/// Checks one POSTed body; see the [module docs](self).
pub(crate) fn check(body: &[u8]) -> Result<Checked, Rejected> {
    let value: Value = serde_json::from_slice(body).map_err(|error| {
        Rejected::new(
            PARSE_ERROR,
            format!("Parse error: the body is not JSON ({error})"),
            Value::Null,
        )
    })?;
    let object = match &value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(Rejected::new(
                INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches are not supported; send one message per request",
                Value::Null,
            ));
        }
        _ => {
            return Err(Rejected::new(
                INVALID_REQUEST,
                "Invalid Request: a JSON-RPC message is a JSON object",
                Value::Null,
            ));
        }
    };
    let id = match object.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err(Rejected::new(
            INVALID_REQUEST,
            r#"Invalid Request: "jsonrpc" must be "2.0""#,
            id,
        ));
    }
    let invalid_params = |method: &str| invalid_params(method, object, id.clone());
    let message: ClientJsonRpcMessage = match serde_json::from_value(value.clone()) {
        Ok(message) => message,
        // rmcp reads only object params (as MCP defines them), whatever the method.
        Err(_) if object.get("params").is_some_and(|p| !p.is_object()) => {
            if let Some(Value::String(method)) = object.get("method") {
                return Err(invalid_params(method));
            }
            return Err(Rejected::new(
                INVALID_REQUEST,
                "Invalid Request: a message with `params` must have a `method`",
                id,
            ));
        }
        Err(error) => {
            return Err(Rejected::new(
                INVALID_REQUEST,
                format!(
                    "Invalid Request: not a JSON-RPC request, notification or response ({error})"
                ),
                id,
            ));
        }
    };
    match &message {
        JsonRpcMessage::Request(request) => match &request.request {
            ClientRequest::CustomRequest(custom)
                if TYPED_METHODS.contains(&custom.method.as_str()) =>
            {
                Err(invalid_params(&custom.method))
            }
            ClientRequest::InitializeRequest(_) => Ok(Checked {
                is_initialize: true,
                id,
            }),
            _ => Ok(Checked {
                is_initialize: false,
                id,
            }),
        },
        _ => Ok(Checked {
            is_initialize: false,
            id,
        }),
    }
}

/// The −32602 for a request of `method` whose params rmcp could not read, saying what is wrong
/// where that is easy to tell.
fn invalid_params(method: &str, request: &Map<String, Value>, id: Value) -> Rejected {
    let params = request.get("params");
    let detail = match params {
        Some(params) if !params.is_object() => "`params` must be an object".to_owned(),
        Some(Value::Object(params)) if method == CallToolRequestMethod::VALUE => {
            match (params.get("name"), params.get("arguments")) {
                (Some(Value::String(_)), None | Some(Value::Null | Value::Object(_))) => {
                    "the params do not have the shape the MCP specification gives them".to_owned()
                }
                (Some(Value::String(_)), Some(other)) => format!(
                    "`arguments` must be an object of named arguments, not {}",
                    agent_core::skill::kind_of(other)
                ),
                _ => "`name` must be the tool's name, a string".to_owned(),
            }
        }
        _ => "the params do not have the shape the MCP specification gives them".to_owned(),
    };
    Rejected::new(
        INVALID_PARAMS,
        format!("Invalid params for `{method}`: {detail}"),
        id,
    )
}

/// A JSON-RPC error response as an HTTP response with `status`.
pub(crate) fn error_response(
    status: StatusCode,
    id: Value,
    code: i64,
    message: &str,
) -> Response<BoxBody<Bytes, Infallible>> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> Result<bool, (i64, Value)> {
        check(body.as_bytes())
            .map(|c| c.is_initialize)
            .map_err(|r| (r.code, r.id))
    }

    #[test]
    fn each_bad_body_gets_the_code_json_rpc_names() {
        assert_eq!(code("{not json"), Err((PARSE_ERROR, Value::Null)));
        assert_eq!(code(""), Err((PARSE_ERROR, Value::Null)));
        assert_eq!(code("[]"), Err((INVALID_REQUEST, Value::Null)));
        assert_eq!(code("7"), Err((INVALID_REQUEST, Value::Null)));
        assert_eq!(
            code(r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#),
            Err((INVALID_REQUEST, json!(3)))
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#),
            Err((INVALID_REQUEST, Value::Null))
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":4}"#),
            Err((INVALID_REQUEST, json!(4)))
        );
        assert_eq!(
            code(
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#
            ),
            Err((INVALID_PARAMS, json!(5)))
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"arguments":{}}}"#),
            Err((INVALID_PARAMS, json!("s")))
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":5}"#),
            Err((INVALID_PARAMS, json!(6)))
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":7,"method":"vendor/custom","params":[1]}"#),
            Err((INVALID_PARAMS, json!(7)))
        );
        assert_eq!(
            code(
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","arguments":[1]},"result":{}}"#
            ),
            Err((INVALID_REQUEST, json!(8)))
        );
    }

    #[test]
    fn good_messages_pass_and_initialize_is_told_apart() {
        let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
        assert_eq!(code(initialize), Ok(true));
        for body in [
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"a":1}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"vendor/custom","params":{"a":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        ] {
            assert_eq!(code(body), Ok(false), "{body}");
        }
    }

    #[test]
    fn the_messages_say_what_is_wrong() {
        let rejected = check(
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x","arguments":"rm -rf"}}"#,
        )
        .unwrap_err();
        assert_eq!(
            rejected.message,
            "Invalid params for `tools/call`: `arguments` must be an object of named arguments, not a string"
        );
    }
}
