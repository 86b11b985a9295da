// One skill's folder named instead of the folder that holds the skills: the error says which call
// to write.
use eugene::agent_skills;

agent_skills!("../../../../fixtures/agent-skills/anthropics/mcp-builder");

fn main() {}
