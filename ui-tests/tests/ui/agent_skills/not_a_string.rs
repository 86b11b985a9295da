// The folder given as a path instead of a string literal.
use eugene::agent_skills;

agent_skills!(skills);

fn main() {}
