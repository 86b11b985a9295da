// Rule `field-type`: `allowed-tools` written as a YAML list instead of a string.
use eugene::agent_skills;

agent_skills!("field_type");

fn main() {}
