//! The `#[skill]` attribute of the eugene agent framework: an ordinary `async fn` becomes a skill
//! the model can call.
//!
//! Use it through `agent_core::skill` (or the `eugene` facade); the attribute's keys, what it
//! generates and its rules are documented there. All runtime logic lives in `agent-core`, which
//! this crate does not depend on. The stages, each in its own (private) module, all report to one
//! error collector, `ctxt::Ctxt`:
//!
//! 1. `attr` parses `#[skill(...)]` and `ast` reads the function into a `SkillFn`;
//! 2. `validate` judges the model, so one build reports every mistake;
//! 3. `expand` emits the code of a valid model.
//!
//! `names` holds what things are called.

#![warn(missing_docs, clippy::missing_docs_in_private_items)]

mod ast;
mod attr;
mod ctxt;
mod expand;
mod names;
mod validate;

use proc_macro::TokenStream;

/// Turns an `async fn` into a skill. See `agent_core::skill` for the keys and what is generated.
#[proc_macro_attribute]
pub fn skill(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    let function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => return expand::errors_and(validate::not_a_function(&item), item).into(),
    };
    let cx = ctxt::Ctxt::new();
    let skill = ast::SkillFn::from_syn(&cx, attr.into(), &function);
    validate::check(&cx, &skill);
    match cx.check() {
        Ok(()) => expand::expand(&skill),
        Err(errors) => expand::errors_and(errors, expand::strip_arg_attrs(&function)),
    }
    .into()
}
