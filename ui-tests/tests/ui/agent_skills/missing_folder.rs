// A folder that does not exist: the error says where it was looked for, and from where.
use eugene::agent_skills;

agent_skills!("no_such_skills");

fn main() {}
