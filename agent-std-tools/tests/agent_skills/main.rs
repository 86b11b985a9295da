//! Agent Skills loaded from folders at run time, in one test binary: loading, `load_skill`
//! attacked, and the published skill-creator read whole in pieces.

mod agent_skill_pieces;
mod agent_skills;
