// Rule `front-matter`: a SKILL.md without front matter between `---` lines.
use eugene::agent_skills;

agent_skills!("front_matter");

fn main() {}
