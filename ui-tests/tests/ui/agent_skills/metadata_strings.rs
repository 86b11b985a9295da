// Rule `metadata-strings`: a metadata value that YAML reads as a number.
use eugene::agent_skills;

agent_skills!("metadata_strings");

fn main() {}
