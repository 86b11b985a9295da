// Rule `file-unreadable`: a SKILL.md saved as Latin-1, not UTF-8.
use eugene::agent_skills;

agent_skills!("file_unreadable");

fn main() {}
