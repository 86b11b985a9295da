// Rule `name-required`: front matter without `name`.
use eugene::agent_skills;

agent_skills!("name_required");

fn main() {}
