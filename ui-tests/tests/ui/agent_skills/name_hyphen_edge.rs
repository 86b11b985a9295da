// Rule `name-hyphen-edge`: a name ending with a hyphen.
use eugene::agent_skills;

agent_skills!("name_hyphen_edge");

fn main() {}
