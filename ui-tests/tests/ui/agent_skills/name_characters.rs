// Rule `name-characters`: a name with capitals and an underscore.
use eugene::agent_skills;

agent_skills!("name_characters");

fn main() {}
