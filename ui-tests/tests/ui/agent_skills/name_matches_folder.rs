// Rule `name-matches-folder`: the name differs from the folder's.
use eugene::agent_skills;

agent_skills!("name_matches_folder");

fn main() {}
