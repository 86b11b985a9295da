// Rule `yaml`: front matter that is not valid YAML.
use eugene::agent_skills;

agent_skills!("yaml");

fn main() {}
