// Two bad skills beside a good one: every violation of both is reported, in one build.
use eugene::agent_skills;

agent_skills!("two_bad_skills");

fn main() {}
