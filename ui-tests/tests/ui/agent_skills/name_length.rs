// Rule `name-length`: a name of 65 characters.
use eugene::agent_skills;

agent_skills!("name_length");

fn main() {}
