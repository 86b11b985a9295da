// Rule `compatibility-length`: an empty `compatibility`.
use eugene::agent_skills;

agent_skills!("compatibility_length");

fn main() {}
