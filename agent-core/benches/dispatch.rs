//! One cheap skill call (`add`) dispatched every way, side by side in one run:
//!
//! - the floor: deserializing the arguments from `&Value`, as a registry does with the calls it
//!   borrows, and calling the function directly;
//! - the owned floor: cloning the arguments first and deserializing with `serde_json::from_value`
//!   (four more allocations), the floor this bench used to compare against;
//! - the skill's own share (`DynSkill::start` and awaiting it), not a goal;
//! - `Registry::run_many` with one call: no hooks, three hooks that proceed (each implements
//!   `before` as an `async fn`; `after` is left to its default), three hooks that only look at the
//!   result (each implements `after`; `before` is left to its default), three `PermissionGate`s
//!   that allow the call; no hooks, with the skill in a live set (`Registry::add_live`), so the
//!   lookup misses the registry's own skills and finds it in the set's snapshot;
//! - the same tool behind rmcp's `ToolRouter::call`, the dispatcher an rmcp server runs for every
//!   `tools/call`. Its API takes the arguments and a request context by value, so each call clones
//!   both, as a server builds them from each request.
//!
//! `cargo bench -p agent-core --bench dispatch` (`BENCH_QUICK=1` for a short run)

use std::hint::black_box;

use agent_core::{
    DynSkill, HookVerdict, PermissionGate, Registry, Skill, SkillContext, SkillError, SkillHook,
    SkillMetadata, SkillOutput, ToolCall, async_trait,
};
use agent_core::{schemars, serde};
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, NumberOrString, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer, serve_directly};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::schemars")]
struct AddInput {
    a: i64,
    b: i64,
}

async fn add(input: AddInput) -> Result<String, SkillError> {
    Ok((input.a + input.b).to_string())
}

struct Add;

#[async_trait]
impl Skill for Add {
    type Input = AddInput;
    fn name(&self) -> &str {
        "add"
    }
    fn description(&self) -> &str {
        "Add two numbers."
    }
    fn is_read_only(&self) -> bool {
        true
    }
    async fn run(&self, input: AddInput, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        add(input).await.map(SkillOutput::from)
    }
}

struct Pass;

#[async_trait]
impl SkillHook for Pass {
    async fn before(
        &self,
        _: &str,
        _: &SkillMetadata,
        _: &Value,
    ) -> Result<HookVerdict, SkillError> {
        Ok(HookVerdict::Proceed)
    }
}

/// A hook that only looks at results: `before` is left to its default.
struct Look;

#[async_trait]
impl SkillHook for Look {
    async fn after(&self, _: &str, _: &Value, result: &mut Result<SkillOutput, SkillError>) {
        black_box(result.is_ok());
    }
}

/// The same tool as an rmcp server writes it.
#[derive(Clone)]
struct AddServer {
    tool_router: ToolRouter<AddServer>,
}

#[tool_router]
impl AddServer {
    /// Add two numbers.
    #[tool]
    async fn add(&self, Parameters(input): Parameters<AddInput>) -> Result<String, ErrorData> {
        add(input)
            .await
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))
    }
}

#[tool_handler]
impl ServerHandler for AddServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let args = json!({"a": 2, "b": 40});
    let calls = [ToolCall::new("call_1", "add", args.clone())];
    let ctx = SkillContext::default();
    let mut plain = Registry::new();
    plain.add(Add);
    let mut hooked = Registry::new();
    hooked
        .add(Add)
        .with_hook(Pass)
        .with_hook(Pass)
        .with_hook(Pass);
    let mut looked = Registry::new();
    looked
        .add(Add)
        .with_hook(Look)
        .with_hook(Look)
        .with_hook(Look);
    let mut live = Registry::new();
    live.add_live(agent_core::LiveSkills::try_new([std::sync::Arc::new(Add) as _]).unwrap());
    let mut gated = Registry::new();
    gated
        .add(Add)
        .with_hook(PermissionGate::new(|_, m| m.is_read_only))
        .with_hook(PermissionGate::new(|_, m| !m.is_destructive))
        .with_hook(PermissionGate::new(|name, _| name != "delete_file"));

    // rmcp's request context holds a peer, which only a running service hands out: serve the
    // server over an in-memory pipe nobody writes to, and take its peer.
    let server = AddServer {
        tool_router: AddServer::tool_router(),
    };
    let (pipe, _other_end) = tokio::io::duplex(64);
    let service =
        rt.block_on(async { serve_directly::<RoleServer, _, _, _, _>(server.clone(), pipe, None) });
    let request = RequestContext::new(NumberOrString::Number(1), service.peer().clone());
    let Value::Object(arguments) = args.clone() else {
        unreachable!("the arguments are an object")
    };

    // Every path gives the same answer before its time counts.
    for registry in [&plain, &hooked, &looked, &gated, &live] {
        let results = rt.block_on(registry.run_many(&calls, &ctx));
        assert_eq!(results[0].content(), "42");
    }
    let params = CallToolRequestParams::new("add").with_arguments(arguments.clone());
    let call = ToolCallContext::new(&server, params, request.clone());
    let Ok(CallToolResponse::Complete(answer)) = rt.block_on(server.tool_router.call(call)) else {
        panic!("rmcp did not complete the call")
    };
    assert_ne!(answer.is_error, Some(true));
    assert_eq!(
        answer.content[0].as_text().map(|t| t.text.as_str()),
        Some("42")
    );

    let mut group = c.benchmark_group("dispatch");
    if std::env::var_os("BENCH_QUICK").is_some() {
        group
            .warm_up_time(std::time::Duration::from_millis(200))
            .measurement_time(std::time::Duration::from_secs(1));
    }
    group.bench_function("floor: deserialize from &Value + direct call", |b| {
        b.to_async(&rt).iter(|| async {
            let input = AddInput::deserialize(black_box(&args)).unwrap();
            black_box(add(input).await.unwrap())
        })
    });
    group.bench_function("owned floor: clone + from_value + direct call", |b| {
        b.to_async(&rt).iter(|| async {
            let input: AddInput = serde_json::from_value(black_box(&args).clone()).unwrap();
            black_box(add(input).await.unwrap())
        })
    });
    // Not a goal: the skill's own share of a registry call (arguments parsed from `&Value`, the
    // boxed future `#[async_trait]` makes), to show what the registry itself adds.
    let skill: std::sync::Arc<dyn DynSkill> = std::sync::Arc::new(Add);
    group.bench_function("DynSkill::start + await", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(skill.start(black_box(&args), &ctx).unwrap().await.unwrap())
        })
    });
    group.bench_function("run_many, no hooks", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(plain.run_many(black_box(&calls), &ctx).await) })
    });
    group.bench_function("run_many, 3 hooks", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(hooked.run_many(black_box(&calls), &ctx).await) })
    });
    group.bench_function("run_many, 3 after-only hooks", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(looked.run_many(black_box(&calls), &ctx).await) })
    });
    group.bench_function("run_many, 3 permission gates", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(gated.run_many(black_box(&calls), &ctx).await) })
    });
    group.bench_function("run_many, no hooks, skill in a live set", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(live.run_many(black_box(&calls), &ctx).await) })
    });
    group.bench_function("rmcp ToolRouter::call", |b| {
        b.to_async(&rt).iter(|| async {
            let params =
                CallToolRequestParams::new("add").with_arguments(black_box(&arguments).clone());
            let call = ToolCallContext::new(&server, params, request.clone());
            black_box(server.tool_router.call(call).await.unwrap())
        })
    });
    group.finish();
    drop(service);
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
