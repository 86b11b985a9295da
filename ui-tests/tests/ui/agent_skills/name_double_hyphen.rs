// Rule `name-double-hyphen`: a name with `--`.
use eugene::agent_skills;

agent_skills!("name_double_hyphen");

fn main() {}
