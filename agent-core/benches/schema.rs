//! `Registry::discover()` over 1,000 linked skills (each generates its schema once, as it enters
//! the registry), and `definitions()` on the result (clones of cached definitions only).
//!
//! `cargo bench -p agent-core --bench schema` (`BENCH_QUICK=1` for a short run)

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Duration;

use agent_core::{__private::inventory, schemars, serde};
use agent_core::{
    DynSkill, Registry, Skill, SkillContext, SkillError, SkillOutput, SkillRegistration,
    async_trait,
};
use criterion::{Criterion, criterion_group, criterion_main};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "agent_core::serde", deny_unknown_fields)]
#[schemars(crate = "agent_core::schemars")]
#[allow(dead_code)]
struct Input {
    /// A path.
    path: String,
    /// How many.
    limit: Option<u32>,
    /// Whether to recurse.
    recursive: bool,
}

fn names() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| (0..1000).map(|i| format!("skill_{i:04}")).collect())
}

/// Skill number `N`.
struct Generated<const N: usize>;

#[async_trait]
impl<const N: usize> Skill for Generated<N> {
    type Input = Input;
    fn name(&self) -> &str {
        &names()[N]
    }
    fn description(&self) -> &str {
        "A generated skill for the discovery benchmark."
    }
    async fn run(&self, _: Input, _: &SkillContext) -> Result<SkillOutput, SkillError> {
        Ok("ok".into())
    }
}

fn construct<const N: usize>() -> Box<dyn DynSkill> {
    Box::new(Generated::<N>)
}

macro_rules! register {
    ($a:literal $b:literal; $($c:literal)*) => {
        $( inventory::submit!(SkillRegistration::new("generated", module_path!(), file!(), line!(), construct::<{ $a * 100 + $b * 10 + $c }>)); )*
    };
}
macro_rules! tens {
    ($a:literal; $($b:literal)*) => { $( register!($a $b; 0 1 2 3 4 5 6 7 8 9); )* };
}
macro_rules! hundreds {
    ($($a:literal)*) => { $( tens!($a; 0 1 2 3 4 5 6 7 8 9); )* };
}
hundreds!(0 1 2 3 4 5 6 7 8 9);

fn schema(c: &mut Criterion) {
    let quick = std::env::var_os("BENCH_QUICK").is_some();
    let mut group = c.benchmark_group("schema");
    if quick {
        group
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_secs(1));
    }
    group.sample_size(20);
    group.bench_function("discover 1000 skills", |b| {
        b.iter(|| black_box(Registry::discover().unwrap()))
    });
    let registry = Registry::discover().unwrap();
    assert_eq!(registry.len(), 1000);
    group.bench_function("definitions() of 1000 skills", |b| {
        b.iter(|| black_box(registry.definitions()))
    });
    group.finish();
}

criterion_group!(benches, schema);
criterion_main!(benches);
