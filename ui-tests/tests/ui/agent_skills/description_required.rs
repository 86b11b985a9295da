// Rule `description-required`: a blank description.
use eugene::agent_skills;

agent_skills!("description_required");

fn main() {}
