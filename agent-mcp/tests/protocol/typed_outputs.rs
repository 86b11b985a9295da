//! Typed skill outputs over MCP: `outputSchema` in `tools/list` (object roots as they are, other
//! roots wrapped as `{"result": ...}`), `structuredContent` beside the text block in `tools/call`,
//! and a served tool consumed by `McpSkills` (and served again) keeping its `outputSchema`.

use agent_core::{Registry, SkillContext, SkillError, SkillOutput, ToolCall, skill};
use agent_mcp::{McpServer, McpSkills};
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value, json};

/// A weather forecast.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Forecast {
    city: String,
    high_c: i32,
}

/// An arithmetic expression: recursive at its root.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Expr {
    Num(f64),
    Neg(Box<Expr>),
}

/// Forecast the weather.
///
/// # Arguments
/// * `city` - Where.
#[skill(read_only, register = false)]
async fn forecast(city: String) -> Result<Forecast, SkillError> {
    Ok(Forecast { city, high_c: 4 })
}

/// List the names.
///
/// # Arguments
/// * `count` - How many.
#[skill(read_only, register = false)]
async fn names(#[arg(default = 2)] count: usize) -> Result<Vec<String>, SkillError> {
    Ok((0..count).map(|i| format!("name{i}")).collect())
}

/// Count the lines.
#[skill(read_only, register = false)]
async fn count() -> Result<u64, SkillError> {
    Ok(42)
}

/// Parse the expression.
#[skill(read_only, register = false)]
async fn parse() -> Result<Expr, SkillError> {
    Ok(Expr::Neg(Box::new(Expr::Num(1.5))))
}

/// Touch the file.
#[skill(register = false)]
async fn touch() -> Result<(), SkillError> {
    Ok(())
}

/// Report as JSON, without a schema.
#[skill(read_only, register = false)]
async fn report() -> Result<Value, SkillError> {
    Ok(json!({"status": "green"}))
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    registry
        .add(ForecastSkill)
        .add(NamesSkill)
        .add(CountSkill)
        .add(ParseSkill)
        .add(TouchSkill)
        .add(ReportSkill)
        .with_output_budget(200);
    registry
}

async fn connect(server: McpServer) -> RunningService<RoleClient, ()> {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("the server starts");
        let _ = running.waiting().await;
    });
    ().serve(client_end).await.expect("the handshake succeeds")
}

async fn consume(server: McpServer) -> McpSkills {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("the server starts");
        let _ = running.waiting().await;
    });
    McpSkills::connect_transport("typed", client_end)
        .await
        .expect("connects")
}

async fn call(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .expect("a tool call is answered with a result")
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn output_schema(tools: &[Tool], name: &str) -> Option<Value> {
    let tool = tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("`{name}` is listed"));
    tool.output_schema
        .as_ref()
        .map(|s| Value::Object(Map::clone(s)))
}

#[tokio::test]
async fn output_schemas_are_listed_and_non_object_ones_wrapped() {
    let client = connect(McpServer::new(registry())).await;
    let tools = client.list_all_tools().await.unwrap();

    assert_eq!(
        output_schema(&tools, "forecast"),
        Some(json!({
            "title": "Forecast",
            "description": "A weather forecast.",
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "high_c": {"type": "integer", "format": "int32"}
            },
            "required": ["city", "high_c"]
        }))
    );
    assert_eq!(
        output_schema(&tools, "names"),
        Some(json!({
            "type": "object",
            "properties": {
                "result": {"title": "Array_of_string", "type": "array", "items": {"type": "string"}}
            },
            "required": ["result"]
        }))
    );
    assert_eq!(
        output_schema(&tools, "count").unwrap()["properties"]["result"]["type"],
        "integer"
    );

    // A recursive enum refers to its own root: after wrapping, to `#/properties/result`.
    let parse = output_schema(&tools, "parse").unwrap();
    assert_eq!(parse["type"], "object");
    assert_eq!(parse["required"], json!(["result"]));
    let refs: Vec<&Value> = parse["properties"]["result"]["oneOf"]
        .as_array()
        .expect("an enum with data is oneOf")
        .iter()
        .filter_map(|variant| variant["properties"]["neg"].get("$ref"))
        .collect();
    assert_eq!(refs, [&json!("#/properties/result")], "{parse}");

    for untyped in ["touch", "report"] {
        assert_eq!(output_schema(&tools, untyped), None, "{untyped}");
    }
}

#[tokio::test]
async fn typed_results_carry_structured_content_and_the_json_as_text() {
    let client = connect(McpServer::new(registry())).await;

    let forecast = call(&client, "forecast", json!({"city": "Oslo"})).await;
    assert_eq!(forecast.is_error, Some(false));
    assert_eq!(
        forecast.structured_content,
        Some(json!({"city": "Oslo", "high_c": 4}))
    );
    assert_eq!(text(&forecast), r#"{"city":"Oslo","high_c":4}"#);

    let names = call(&client, "names", json!({})).await;
    assert_eq!(
        names.structured_content,
        Some(json!({"result": ["name0", "name1"]}))
    );
    assert_eq!(
        text(&names),
        r#"["name0","name1"]"#,
        "the text is what a model reads"
    );

    let count = call(&client, "count", json!({})).await;
    assert_eq!(count.structured_content, Some(json!({"result": 42})));
    assert_eq!(text(&count), "42");

    let parse = call(&client, "parse", json!({})).await;
    assert_eq!(
        parse.structured_content,
        Some(json!({"result": {"neg": {"num": 1.5}}}))
    );

    let touch = call(&client, "touch", json!({})).await;
    assert_eq!(
        (touch.structured_content.clone(), text(&touch)),
        (None, "done".to_owned())
    );

    let report = call(&client, "report", json!({})).await;
    assert_eq!(report.structured_content, Some(json!({"status": "green"})));
}

#[tokio::test]
async fn a_typed_result_cut_to_text_is_an_error_result() {
    let client = connect(McpServer::new(registry())).await;
    let long = call(&client, "names", json!({"count": 100})).await;
    assert_eq!(long.is_error, Some(true), "text cannot follow the schema");
    assert_eq!(long.structured_content, None);
    assert!(text(&long).contains("[output truncated"), "{}", text(&long));
}

#[tokio::test]
async fn consumed_tools_keep_the_output_schema_and_answer_structured_values() {
    let served = McpServer::new(registry());
    let listed = served.tools();
    let remote = consume(served).await;
    let mut consumer = Registry::new();
    remote.add_to(&mut consumer).unwrap();

    for name in ["forecast", "names", "count", "parse", "touch", "report"] {
        let definition = consumer
            .definitions()
            .into_iter()
            .find(|d| d.name == name)
            .unwrap();
        assert_eq!(
            definition.output_schema,
            output_schema(&listed, name),
            "{name}: the server's outputSchema"
        );
        assert_eq!(
            consumer
                .metadata(name)
                .unwrap()
                .output_schema
                .as_deref()
                .cloned(),
            definition.output_schema
        );
    }

    let ctx = SkillContext::default();
    let run = |name: &'static str, args: Value| {
        let consumer = &consumer;
        let ctx = &ctx;
        async move {
            consumer
                .run_one(&ToolCall::new("1", name, args), ctx)
                .await
                .output
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        }
    };
    assert_eq!(
        run("forecast", json!({"city": "Bergen"})).await,
        SkillOutput::Json(json!({"city": "Bergen", "high_c": 4}))
    );
    assert_eq!(
        run("names", json!({"count": 1})).await,
        SkillOutput::Json(json!({"result": ["name0"]})),
        "the wrapper is kept: it is what the output schema describes"
    );
    assert_eq!(
        run("touch", json!({})).await,
        SkillOutput::Text("done".into())
    );
}

#[tokio::test]
async fn a_consumed_tool_served_again_lists_the_same_output_schema_and_content() {
    let first = McpServer::new(registry());
    let listed = first.tools();
    let remote = consume(first).await;
    let mut middle = Registry::new();
    remote.add_to(&mut middle).unwrap();
    let client = connect(McpServer::new(middle)).await;

    let relisted = client.list_all_tools().await.unwrap();
    for name in ["forecast", "names", "parse", "touch"] {
        assert_eq!(
            output_schema(&relisted, name),
            output_schema(&listed, name),
            "{name}"
        );
    }
    let names = call(&client, "names", json!({})).await;
    assert_eq!(names.is_error, Some(false));
    assert_eq!(
        names.structured_content,
        Some(json!({"result": ["name0", "name1"]})),
        "not wrapped twice"
    );
}
