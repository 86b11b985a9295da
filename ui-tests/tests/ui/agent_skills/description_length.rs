// Rule `description-length`: a description of 1025 characters.
use eugene::agent_skills;

agent_skills!("description_length");

fn main() {}
