//! A program's calls are `execute_tool` spans under the `run_code` call's own, as calls of a
//! nested agent are (a binary of its own: it sets a subscriber).

mod common;

use std::sync::{Arc, Mutex};

use test_support::traced::TextFields;
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use common::{Ran, runtime};

/// A span's tool and the tool of the `execute_tool` span it sits in.
type ToolAndParent = (String, Option<String>);

/// Each `execute_tool` span's tool, and its parent's tool.
#[derive(Default, Clone)]
struct Tools(Arc<Mutex<Vec<ToolAndParent>>>);

fn tool_of(fields: &[(String, String)]) -> Option<String> {
    fields
        .iter()
        .find(|(name, _)| name == "gen_ai.tool.name")
        .map(|(_, value)| value.clone())
}

/// The tool name a span was made with, kept in its extensions.
struct Tool(Option<String>);

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Tools {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let span = ctx.span(id).expect("the span exists");
        let mut fields = Vec::new();
        attrs.record(&mut TextFields(&mut fields));
        let tool = tool_of(&fields);
        if attrs.metadata().name() == "execute_tool" {
            let parent = span
                .scope()
                .skip(1)
                .find(|s| s.name() == "execute_tool")
                .and_then(|s| s.extensions().get::<Tool>().and_then(|t| t.0.clone()));
            self.0
                .lock()
                .unwrap()
                .push((tool.clone().unwrap_or_default(), parent));
        }
        span.extensions_mut().insert(Tool(tool));
    }
}

#[tokio::test]
async fn a_programs_calls_are_spans_under_the_run_code_call() {
    let tools = Tools::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(tools.clone()));
    let ran = Arc::new(Ran::default());
    let (runtime, _) = runtime(
        "await read_note({ name: 'x' }); return await add({ a: 1, b: 2 });",
        &ran,
    );
    runtime.run("Run it.").await.unwrap();
    let seen = tools.0.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("run_code".to_owned(), None),
            ("read_note".to_owned(), Some("run_code".to_owned())),
            ("add".to_owned(), Some("run_code".to_owned())),
        ]
    );
}
