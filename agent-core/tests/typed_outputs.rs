//! Typed skill outputs through a `Registry`: what the model reads (compact JSON text), what hooks'
//! `after` sees (the structured value), the output schema in `ToolDefinition` and `SkillMetadata`
//! (generated once, when the skill is added), a hand-written skill declaring one, and values that
//! fail to serialize becoming error results.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::schema::schema_for_output;
use agent_core::{
    Registry, Skill, SkillContext, SkillError, SkillHook, SkillOutput, ToolCall, ToolDefinition,
    async_trait, skill,
};
use agent_core::{schemars, serde};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Value, json};

/// A weather forecast.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde")]
#[schemars(crate = "agent_core::schemars")]
struct Forecast {
    /// Where.
    city: String,
    /// Highest temperature, in °C.
    high_c: i32,
    sky: Sky,
    /// Written by serde even when `None`, so required in the output schema.
    warning: Option<String>,
    /// Left out when `None`, so not required.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", rename_all = "lowercase")]
#[schemars(crate = "agent_core::schemars")]
enum Sky {
    #[allow(dead_code)] // in the schema only
    Sunny,
    Cloudy,
}

/// What a check found.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", tag = "kind", rename_all = "snake_case")]
#[schemars(crate = "agent_core::schemars")]
enum Finding {
    Clean,
    Problem { line: u32, message: String },
}

/// A directory tree: recursive, so its definition stays under `$defs`.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde")]
#[schemars(crate = "agent_core::schemars")]
struct Tree {
    name: String,
    children: Vec<Tree>,
}

/// Forecast the weather.
#[skill(read_only, register = false)]
async fn forecast() -> Result<Forecast, SkillError> {
    Ok(Forecast {
        city: "Oslo".into(),
        high_c: 4,
        sky: Sky::Cloudy,
        warning: None,
        note: None,
    })
}

/// Check a file.
///
/// # Arguments
/// * `dirty` - Whether to find a problem.
#[skill(read_only, register = false)]
async fn check(dirty: bool) -> Result<Finding, SkillError> {
    Ok(if dirty {
        Finding::Problem {
            line: 7,
            message: "tab".into(),
        }
    } else {
        Finding::Clean
    })
}

/// List the names.
#[skill(read_only, register = false)]
async fn names() -> Result<Vec<String>, SkillError> {
    Ok(vec!["a".into(), "b".into()])
}

/// Count the lines.
#[skill(read_only, register = false)]
async fn count() -> Result<u64, std::io::Error> {
    Ok(42)
}

/// Average the numbers.
#[skill(read_only, register = false)]
async fn average() -> Result<f64, SkillError> {
    Ok(2.5)
}

/// Whether the build is green.
#[skill(read_only, register = false)]
async fn green() -> Result<bool, SkillError> {
    Ok(true)
}

/// Touch the file.
#[skill(register = false)]
async fn touch() -> Result<(), SkillError> {
    Ok(())
}

/// Say hello.
#[skill(read_only, register = false)]
async fn hello() -> Result<String, SkillError> {
    Ok("hello".into())
}

/// Say hi.
#[skill(read_only, register = false)]
async fn hi() -> Result<&'static str, SkillError> {
    Ok("hi")
}

/// Report as JSON.
#[skill(read_only, register = false)]
async fn report() -> Result<Value, SkillError> {
    Ok(json!({"status": "green"}))
}

/// Answer with an output of its own making.
#[skill(read_only, register = false)]
async fn made() -> Result<SkillOutput, SkillError> {
    Ok(SkillOutput::Text("made".into()))
}

/// Show the tree.
#[skill(read_only, register = false)]
async fn tree() -> Result<Tree, SkillError> {
    Ok(Tree {
        name: "root".into(),
        children: vec![Tree {
            name: "leaf".into(),
            children: vec![],
        }],
    })
}

/// Show the trees.
#[skill(read_only, register = false)]
async fn forest() -> Result<Vec<Tree>, SkillError> {
    Ok(vec![Tree {
        name: "oak".into(),
        children: vec![],
    }])
}

/// Map the grid: keys that are not strings, which JSON objects cannot have.
#[skill(read_only, register = false)]
async fn grid() -> Result<HashMap<(u8, u8), u8>, SkillError> {
    Ok(HashMap::from([((0, 0), 1)]))
}

/// A value whose `Serialize` fails.
struct Broken;

impl serde::Serialize for Broken {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("the sensor is unplugged"))
    }
}

impl JsonSchema for Broken {
    fn schema_name() -> Cow<'static, str> {
        "Broken".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "object"})
    }
}

/// Read the sensor.
#[skill(read_only, register = false)]
async fn sensor() -> Result<Broken, SkillError> {
    Ok(Broken)
}

/// Records what every `after` sees.
#[derive(Default)]
struct Seen(Mutex<Vec<(String, Result<SkillOutput, String>)>>);

/// The hook that fills a [`Seen`].
struct Recorder(Arc<Seen>);

#[async_trait]
impl SkillHook for Recorder {
    async fn after(
        &self,
        skill_name: &str,
        _args: &Value,
        result: &mut Result<SkillOutput, SkillError>,
    ) {
        let seen = result.as_ref().map(Clone::clone).map_err(|e| e.to_string());
        self.0.0.lock().unwrap().push((skill_name.to_owned(), seen));
    }
}

fn registry_with(seen: &Arc<Seen>) -> Registry {
    let mut registry = Registry::new();
    registry
        .add(ForecastSkill)
        .add(CheckSkill)
        .add(NamesSkill)
        .add(CountSkill)
        .add(AverageSkill)
        .add(GreenSkill)
        .add(TouchSkill)
        .add(HelloSkill)
        .add(HiSkill)
        .add(ReportSkill)
        .add(MadeSkill)
        .add(TreeSkill)
        .add(ForestSkill)
        .add(GridSkill)
        .add(SensorSkill)
        .with_hook(Recorder(seen.clone()));
    registry
}

fn definition(registry: &Registry, name: &str) -> ToolDefinition {
    registry
        .definitions()
        .into_iter()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no definition of `{name}`"))
}

/// Runs one call: the text the model reads, and the output hooks' `after` saw.
async fn run(registry: &Registry, seen: &Seen, name: &str, args: Value) -> (String, SkillOutput) {
    let result = registry
        .run_one(&ToolCall::new("1", name, args), &SkillContext::default())
        .await;
    assert!(!result.is_error(), "{name}: {}", result.content());
    let (hooked, output) = seen.0.lock().unwrap().pop().expect("after ran");
    assert_eq!(hooked, name);
    let output = output.expect("after saw a success");
    assert_eq!(
        result.output.as_ref().unwrap(),
        &output,
        "the result is what after saw"
    );
    (result.content().into_owned(), output)
}

#[tokio::test]
async fn a_struct_is_compact_json_for_the_model_and_a_value_for_hooks() {
    let seen = Arc::new(Seen::default());
    let registry = registry_with(&seen);
    let (text, output) = run(&registry, &seen, "forecast", json!({})).await;
    assert_eq!(
        text,
        r#"{"city":"Oslo","high_c":4,"sky":"cloudy","warning":null}"#
    );
    assert_eq!(
        output,
        SkillOutput::Json(json!({"city": "Oslo", "high_c": 4, "sky": "cloudy", "warning": null}))
    );

    let schema = definition(&registry, "forecast").output_schema.unwrap();
    assert_eq!(
        schema,
        json!({
            "title": "Forecast",
            "description": "A weather forecast.",
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "Where."},
                "high_c": {"type": "integer", "format": "int32", "description": "Highest temperature, in °C."},
                "sky": {"type": "string", "enum": ["sunny", "cloudy"]},
                "warning": {
                    "type": ["string", "null"],
                    "description": "Written by serde even when `None`, so required in the output schema."
                },
                "note": {
                    "type": ["string", "null"],
                    "description": "Left out when `None`, so not required."
                }
            },
            "required": ["city", "high_c", "sky", "warning"]
        })
    );
    let metadata = registry.metadata("forecast").unwrap();
    assert_eq!(metadata.output_schema.as_deref(), Some(&schema));
}

#[tokio::test]
async fn enums_vecs_numbers_and_bools_are_json_with_their_schema() {
    let seen = Arc::new(Seen::default());
    let registry = registry_with(&seen);
    let cases = [
        (
            "check",
            json!({"dirty": true}),
            json!({"kind": "problem", "line": 7, "message": "tab"}),
        ),
        ("check", json!({"dirty": false}), json!({"kind": "clean"})),
        ("names", json!({}), json!(["a", "b"])),
        ("count", json!({}), json!(42)),
        ("average", json!({}), json!(2.5)),
        ("green", json!({}), json!(true)),
    ];
    for (name, args, value) in cases {
        let (text, output) = run(&registry, &seen, name, args).await;
        assert_eq!(text, value.to_string(), "{name}");
        assert_eq!(output, SkillOutput::Json(value), "{name}");
    }

    let schema = |name| definition(&registry, name).output_schema.unwrap();
    let check = schema("check");
    assert_eq!(check["description"], "What a check found.");
    let variants = check["oneOf"]
        .as_array()
        .expect("an enum with data is oneOf");
    assert_eq!(variants.len(), 2);
    assert_eq!(variants[0]["properties"]["kind"]["const"], "clean");
    assert_eq!(variants[1]["required"], json!(["kind", "line", "message"]));
    assert_eq!(
        schema("names"),
        json!({"title": "Array_of_string", "type": "array", "items": {"type": "string"}})
    );
    assert_eq!(
        schema("count"),
        json!({"title": "uint64", "type": "integer", "format": "uint64", "minimum": 0})
    );
    assert_eq!(
        schema("average"),
        json!({"title": "double", "type": "number", "format": "double"})
    );
    assert_eq!(
        schema("green"),
        json!({"title": "boolean", "type": "boolean"})
    );
}

#[tokio::test]
async fn unit_is_a_short_confirmation_and_text_json_and_outputs_stay_as_they_were() {
    let seen = Arc::new(Seen::default());
    let registry = registry_with(&seen);
    let cases = [
        ("touch", SkillOutput::Text("done".into())),
        ("hello", SkillOutput::Text("hello".into())),
        ("hi", SkillOutput::Text("hi".into())),
        ("report", SkillOutput::Json(json!({"status": "green"}))),
        ("made", SkillOutput::Text("made".into())),
    ];
    for (name, expected) in cases {
        let (text, output) = run(&registry, &seen, name, json!({})).await;
        assert_eq!(text, expected.to_text(), "{name}");
        assert_eq!(output, expected, "{name}");
        assert_eq!(
            definition(&registry, name).output_schema,
            None,
            "{name} declares no output schema"
        );
        assert_eq!(registry.metadata(name).unwrap().output_schema, None);
    }
    let serialized = serde_json::to_value(definition(&registry, "hello")).unwrap();
    assert!(
        serialized.get("output_schema").is_none(),
        "an absent output schema is not serialized: {serialized}"
    );
}

#[tokio::test]
async fn a_recursive_type_refers_to_itself_at_the_root_or_under_defs() {
    let seen = Arc::new(Seen::default());
    let registry = registry_with(&seen);
    let (text, _) = run(&registry, &seen, "tree", json!({})).await;
    assert_eq!(
        text,
        r#"{"name":"root","children":[{"name":"leaf","children":[]}]}"#
    );
    let schema = definition(&registry, "tree").output_schema.unwrap();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["children"]["items"]["$ref"], "#");
    assert!(schema.get("$schema").is_none(), "{schema}");

    let (text, _) = run(&registry, &seen, "forest", json!({})).await;
    assert_eq!(text, r#"[{"name":"oak","children":[]}]"#);
    let schema = definition(&registry, "forest").output_schema.unwrap();
    assert_eq!(schema["type"], "array", "{schema}");
    assert_eq!(
        schema["items"]["properties"]["children"]["items"]["$ref"], "#/$defs/Tree",
        "{schema}"
    );
    assert_eq!(
        schema["$defs"]["Tree"]["properties"]["children"]["items"]["$ref"],
        "#/$defs/Tree"
    );
}

#[tokio::test]
async fn a_value_that_cannot_be_serialized_is_an_error_result_not_a_panic() {
    let seen = Arc::new(Seen::default());
    let registry = registry_with(&seen);
    let ctx = SkillContext::default();
    for (name, cause) in [
        ("grid", "key must be a string"),
        ("sensor", "the sensor is unplugged"),
    ] {
        let result = registry
            .run_one(&ToolCall::new("1", name, json!({})), &ctx)
            .await;
        assert!(
            matches!(result.output, Err(SkillError::Tool { .. })),
            "{name}: {:?}",
            result.output
        );
        assert_eq!(
            result.content(),
            format!("the skill's output could not be serialized as JSON: {cause}"),
            "{name}"
        );
        let (_, after) = seen.0.lock().unwrap().pop().unwrap();
        assert!(after.is_err(), "after sees the error too");
    }
    // The schema is there all the same: it describes the type, not one value.
    assert_eq!(
        definition(&registry, "grid").output_schema.unwrap()["type"],
        "object"
    );
}

static OUTPUT_SCHEMA_CALLS: AtomicUsize = AtomicUsize::new(0);

/// A reading whose output-schema generations are counted.
#[derive(serde::Serialize)]
#[serde(crate = "agent_core::serde")]
struct Reading {
    volts: f32,
}

impl JsonSchema for Reading {
    fn schema_name() -> Cow<'static, str> {
        "Reading".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        OUTPUT_SCHEMA_CALLS.fetch_add(1, Ordering::SeqCst);
        json_schema!({"type": "object", "properties": {"volts": {"type": "number"}}, "required": ["volts"]})
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::schemars")]
struct NoInput {}

/// A skill written by hand that declares its output schema.
struct Voltmeter;

#[async_trait]
impl Skill for Voltmeter {
    type Input = NoInput;
    fn name(&self) -> &str {
        "voltmeter"
    }
    fn description(&self) -> &str {
        "Measure the voltage."
    }
    fn output_schema(&self) -> Option<Value> {
        Some(schema_for_output::<Reading>())
    }
    async fn run(&self, _: NoInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        let reading = Reading { volts: 3.5 };
        Ok(SkillOutput::Json(
            serde_json::to_value(reading).map_err(SkillError::from_error)?,
        ))
    }
}

#[tokio::test]
async fn a_hand_written_skill_declares_its_output_schema_which_is_read_once() {
    let mut registry = Registry::new();
    registry.add(Voltmeter);
    let expected = json!({
        "title": "Reading",
        "type": "object",
        "properties": {"volts": {"type": "number"}},
        "required": ["volts"]
    });
    assert_eq!(OUTPUT_SCHEMA_CALLS.load(Ordering::SeqCst), 1);
    for _ in 0..5 {
        assert_eq!(
            registry.definitions()[0].output_schema.as_ref(),
            Some(&expected)
        );
    }
    let metadata = registry.metadata("voltmeter").unwrap().clone();
    assert_eq!(metadata.output_schema.as_deref(), Some(&expected));
    let result = registry
        .run_one(
            &ToolCall::new("1", "voltmeter", json!({})),
            &SkillContext::default(),
        )
        .await;
    assert_eq!(result.content(), r#"{"volts":3.5}"#);
    assert_eq!(
        OUTPUT_SCHEMA_CALLS.load(Ordering::SeqCst),
        1,
        "neither definitions(), metadata() nor a call regenerates it"
    );
    // `DynSkill::metadata` alone leaves it to the registry.
    assert_eq!(
        agent_core::DynSkill::metadata(&Voltmeter).output_schema,
        None
    );
}

#[tokio::test]
async fn the_function_still_returns_its_typed_value() {
    let forecast = forecast().await.unwrap();
    assert_eq!((forecast.city.as_str(), forecast.high_c), ("Oslo", 4));
    assert_eq!(names().await.unwrap(), ["a", "b"]);
    touch().await.unwrap();
}
