//! One case of a dataset: a goal with any attachments, an optional typed output, checks,
//! attempts.

use agent_core::content::Media;
use serde_json::Value;

use crate::check::Check;
use crate::schema::Schema;
use crate::schema_error::SchemaError;
use agent_runtime::OutputType;

/// The most attempts one case may ask for.
pub const MAX_REPEAT: usize = 1_000;
/// The longest case name, in characters.
pub const MAX_NAME_CHARS: usize = 256;

/// One case: a goal for the agent (with any images, documents or sounds attached to it), what
/// its answer must satisfy, how many attempts it gets.
#[derive(Debug, Clone)]
pub struct Case {
    name: String,
    goal: String,
    attachments: Vec<Media>,
    /// The `attach:` paths of a YAML case, as written, until the dataset loads them.
    pub(crate) attach_paths: Vec<String>,
    output: Option<OutputType>,
    output_schema: Option<Value>,
    checks: Vec<Check>,
    repeat: Option<usize>,
}

impl Case {
    /// A case named `name` (unique in its dataset) whose run is given `goal`.
    pub fn new(name: impl Into<String>, goal: impl Into<String>) -> Case {
        Case {
            name: name.into(),
            goal: goal.into(),
            attachments: Vec::new(),
            attach_paths: Vec::new(),
            output: None,
            output_schema: None,
            checks: Vec::new(),
            repeat: None,
        }
    }

    /// Attaches media to the goal (each attempt's run gets it with the goal, as
    /// `AgentRuntime::run(goal).attach(media)` would). The provider checks it before sending.
    pub fn attach(mut self, media: Media) -> Case {
        self.add_attachment(media);
        self
    }

    /// [`Case::attach`] in place.
    pub(crate) fn add_attachment(&mut self, media: Media) {
        self.attachments.push(media);
    }

    /// Adds a check; an attempt passes when its run finished and every check passed.
    pub fn check(mut self, check: Check) -> Case {
        self.checks.push(check);
        self
    }

    /// Makes the case a typed run that must end with a value following `schema` (a JSON
    /// Schema); [`SchemaError::Invalid`] when it is not a valid
    /// schema.
    pub fn output_schema(mut self, schema: Value) -> Result<Case, SchemaError> {
        let compiled = Schema::new(schema.clone())?;
        self.output = Some(compiled.output_type());
        self.output_schema = Some(schema);
        Ok(self)
    }

    /// Makes the case a typed run that must end with `output` (e.g. `OutputType::of::<T>()`).
    pub fn output(mut self, output: OutputType) -> Case {
        self.output_schema = Some(output.schema().clone());
        self.output = Some(output);
        self
    }

    /// Attempts for this case, whatever the eval's default (at least 1).
    pub fn repeat(mut self, attempts: usize) -> Case {
        self.repeat = Some(attempts);
        self
    }

    /// The case's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The goal its run is given.
    pub fn goal(&self) -> &str {
        &self.goal
    }

    /// The media attached to the goal, in order.
    pub fn attachments(&self) -> &[Media] {
        &self.attachments
    }

    /// The checks, in order.
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// A typed case's output; `None` for an untyped one.
    pub fn output_type(&self) -> Option<&OutputType> {
        self.output.as_ref()
    }

    /// The schema a typed case's value follows, as the model is shown it.
    pub fn schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// The case's own number of attempts, if it names one.
    pub fn attempts(&self) -> Option<usize> {
        self.repeat
    }
}
