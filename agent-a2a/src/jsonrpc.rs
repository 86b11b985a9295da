//! JSON-RPC 2.0 as the A2A binding uses it: the request envelope the server reads, the response
//! and error objects both sides write and read, and the error codes (JSON-RPC's and A2A's).

use serde_json::{Value, json};

/// Invalid JSON.
pub const PARSE_ERROR: i64 = -32700;
/// Not a JSON-RPC request.
pub const INVALID_REQUEST: i64 = -32600;
/// No such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// The params do not fit the method.
pub const INVALID_PARAMS: i64 = -32602;
/// The server failed.
pub const INTERNAL_ERROR: i64 = -32603;
/// A2A: no task with that id.
pub const TASK_NOT_FOUND: i64 = -32001;
/// A2A: the task cannot be cancelled (it has ended).
pub const TASK_NOT_CANCELABLE: i64 = -32002;
/// A2A: push notifications are not supported.
pub const PUSH_NOTIFICATION_NOT_SUPPORTED: i64 = -32003;
/// A2A: the operation is not supported (in this state).
pub const UNSUPPORTED_OPERATION: i64 = -32004;
/// A2A: no extended agent card.
pub const EXTENDED_CARD_NOT_CONFIGURED: i64 = -32007;
/// A2A: the requested protocol version is not supported.
pub const VERSION_NOT_SUPPORTED: i64 = -32009;

/// A JSON-RPC error: code and message (the A2A `ErrorInfo` detail is added when written).
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The code.
    pub code: i64,
    /// What went wrong, for people.
    pub message: String,
}

impl RpcError {
    /// An error with this code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
        }
    }

    fn reason(&self) -> &'static str {
        match self.code {
            PARSE_ERROR => "PARSE_ERROR",
            INVALID_REQUEST => "INVALID_REQUEST",
            METHOD_NOT_FOUND => "METHOD_NOT_FOUND",
            INVALID_PARAMS => "INVALID_PARAMS",
            TASK_NOT_FOUND => "TASK_NOT_FOUND",
            TASK_NOT_CANCELABLE => "TASK_NOT_CANCELABLE",
            PUSH_NOTIFICATION_NOT_SUPPORTED => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            UNSUPPORTED_OPERATION => "UNSUPPORTED_OPERATION",
            EXTENDED_CARD_NOT_CONFIGURED => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            VERSION_NOT_SUPPORTED => "VERSION_NOT_SUPPORTED",
            _ => "INTERNAL",
        }
    }

    /// The error object, with a `google.rpc.ErrorInfo` detail as the binding describes.
    pub fn to_json(&self) -> Value {
        json!({
            "code": self.code,
            "message": self.message,
            "data": [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": self.reason(),
                "domain": "a2a-protocol.org",
            }],
        })
    }
}

/// A request the server accepted as JSON-RPC: its id, method and params.
#[derive(Debug)]
pub struct Request {
    /// The id, echoed in the answer (`null` for notifications).
    pub id: Value,
    /// The method.
    pub method: String,
    /// The params (`{}` when absent).
    pub params: Value,
}

/// Reads a request body as one JSON-RPC request. The error carries the id to answer with.
pub fn parse_request(body: &[u8]) -> Result<Request, (Value, RpcError)> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        (
            Value::Null,
            RpcError::new(PARSE_ERROR, format!("invalid JSON payload: {e}")),
        )
    })?;
    let Value::Object(mut object) = value else {
        return Err((
            Value::Null,
            RpcError::new(
                INVALID_REQUEST,
                "a JSON-RPC request must be one JSON object (batches are not supported)",
            ),
        ));
    };
    let id = match object.remove("id") {
        None => Value::Null,
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => id,
        Some(_) => {
            return Err((
                Value::Null,
                RpcError::new(INVALID_REQUEST, "`id` must be a string, a number or null"),
            ));
        }
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((
            id,
            RpcError::new(INVALID_REQUEST, "`jsonrpc` must be \"2.0\""),
        ));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        _ => {
            return Err((
                id,
                RpcError::new(INVALID_REQUEST, "`method` must be a string"),
            ));
        }
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(params @ Value::Object(_)) => params,
        Some(_) => {
            return Err((
                id,
                RpcError::new(INVALID_PARAMS, "`params` must be an object"),
            ));
        }
    };
    Ok(Request { id, method, params })
}

/// A success answer.
pub fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error answer.
pub fn error(id: &Value, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": error.to_json()})
}

/// What an answer holds: the result, or the remote's error (code and message); `Err(text)` when
/// it is no JSON-RPC answer at all.
pub fn read_response(value: Value) -> Result<Result<Value, RpcError>, String> {
    let Value::Object(mut object) = value else {
        return Err("the answer is not a JSON object".into());
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("the answer has no `\"jsonrpc\": \"2.0\"`".into());
    }
    if let Some(error) = object.remove("error") {
        let code = error.get("code").and_then(Value::as_i64);
        let message = error.get("message").and_then(Value::as_str);
        return match (code, message) {
            (Some(code), Some(message)) => Ok(Err(RpcError::new(code, message))),
            _ => Err(format!("the error object {error} has no code and message")),
        };
    }
    match object.remove("result") {
        Some(result) => Ok(Ok(result)),
        None => Err("the answer has neither `result` nor `error`".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_requests_get_the_right_codes() {
        let code = |body: &str| parse_request(body.as_bytes()).unwrap_err().1.code;
        assert_eq!(code("{not json"), PARSE_ERROR);
        assert_eq!(code("[1]"), INVALID_REQUEST);
        assert_eq!(code(r#"{"id":1,"method":"GetTask"}"#), INVALID_REQUEST);
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1}"#), INVALID_REQUEST);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1]}"#),
            INVALID_PARAMS
        );
        let ok = parse_request(br#"{"jsonrpc":"2.0","id":"a","method":"GetTask"}"#).unwrap();
        assert_eq!((ok.id, ok.method.as_str()), (json!("a"), "GetTask"));
    }
}
