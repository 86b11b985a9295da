#!/usr/bin/env bash
# Compile cost of #[skill]: a crate of N #[skill] fns against a crate of N hand-written
# `impl Skill`s with the same inputs, behaviour and link-time registration (MACRO_EXTRA=", register
# = false" leaves registration out of both). Dependencies are built once; each crate is then
# rebuilt from clean (its own artifacts only) RUNS times, and the medians are compared.
#
#   bash benches/macro_compile_cost.sh            # N=100, RUNS=3, debug profile
#   N=100 RUNS=3 PROFILE=release bash benches/macro_compile_cost.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=${N:-100}
runs=${RUNS:-3}
profile=${PROFILE:-dev}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make_crate() { # name, body-generator
  mkdir -p "$work/$1/src"
  cat > "$work/$1/Cargo.toml" <<TOML
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
agent-core = { path = "$root/agent-core" }
TOML
  "$2" > "$work/$1/src/lib.rs"
}

macro_body() {
  echo 'use agent_core::{skill, SkillError};'
  for i in $(seq 1 "$n"); do
    cat <<RS

/// Skill number $i: joins its arguments.
///
/// # Arguments
/// * \`text\` - Some text.
/// * \`count\` - How many times.
#[skill(read_only${MACRO_EXTRA:-})]
pub async fn skill_$i(text: String, count: Option<u32>) -> Result<String, SkillError> {
    Ok(format!("{text} {count:?} $i"))
}
RS
  done
}

manual_body() {
  echo 'use agent_core::{async_trait, Skill, SkillContext, SkillError, SkillOutput};'
  echo 'use agent_core::{__private::inventory, schemars, serde};'
  echo 'use agent_core::{DynSkill, SkillRegistration};'
  for i in $(seq 1 "$n"); do
    cat <<RS

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::schemars")]
pub struct Skill${i}Input {
    /// Some text.
    text: String,
    /// How many times.
    count: Option<u32>,
}

/// Skill number $i.
pub struct Skill$i;

#[async_trait]
impl Skill for Skill$i {
    type Input = Skill${i}Input;
    fn name(&self) -> &str { "skill_$i" }
    fn description(&self) -> &str { "Skill number $i: joins its arguments." }
    fn is_read_only(&self) -> bool { true }
    async fn run(&self, input: Skill${i}Input, _ctx: &SkillContext) -> Result<SkillOutput, SkillError> {
        Ok(format!("{} {:?} $i", input.text, input.count).into())
    }
}
RS
    if [ -z "${MACRO_EXTRA:-}" ]; then cat <<RS

fn construct_$i() -> Box<dyn DynSkill> {
    Box::new(Skill$i)
}

inventory::submit!(SkillRegistration::new("skill_$i", module_path!(), file!(), line!(), construct_$i));
RS
    fi
  done
}

make_crate with_macro macro_body
make_crate by_hand manual_body
cat > "$work/Cargo.toml" <<TOML
[workspace]
members = ["with_macro", "by_hand"]
resolver = "3"
TOML
export CARGO_TARGET_DIR="$work/target"
cd "$work"
cargo build -q --profile "$profile" -p by_hand -p with_macro # dependencies, once

measure() { # package -> prints the median of RUNS clean builds, in seconds
  local times=()
  for _ in $(seq 1 "$runs"); do
    cargo clean -q --profile "$profile" -p "$1"
    local start end
    start=$(date +%s.%N)
    cargo build -q --profile "$profile" -p "$1"
    end=$(date +%s.%N)
    times+=("$(awk "BEGIN { printf \"%.2f\", $end - $start }")")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

macro=$(measure with_macro)
manual=$(measure by_hand)
ratio=$(awk "BEGIN { printf \"%.2f\", $macro / $manual }")
echo "profile=$profile n=$n runs=$runs"
echo "#[skill] crate:     ${macro}s (median)"
echo "hand-written crate: ${manual}s (median)"
echo "ratio:              ${ratio}x"
