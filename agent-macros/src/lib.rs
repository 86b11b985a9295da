//! The `#[skill]` attribute of the eugene agent framework: an ordinary `async fn` becomes a skill
//! the model can call.
//!
//! Use it through `agent_core::skill` (or the `eugene` facade); the attribute's keys, what it
//! generates and its rules are documented there. This crate holds only parsing (`attr`, `ast`),
//! validation (`validate`) and code generation (`expand`); all runtime logic lives in `agent-core`,
//! which this crate does not depend on.

#![warn(missing_docs)]

mod ast;
mod attr;
mod expand;
mod validate;

use proc_macro::TokenStream;

/// Turns an `async fn` into a skill. See `agent_core::skill` for the keys and what is generated.
#[proc_macro_attribute]
pub fn skill(attr: TokenStream, item: TokenStream) -> TokenStream {
    skill_impl(attr.into(), item.into()).into()
}

fn skill_impl(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            let error = syn::Error::new(
                item_keyword_span(&item),
                "#[skill] goes on an `async fn`; it cannot be used on other items",
            );
            let mut tokens = error.into_compile_error();
            tokens.extend(item);
            return tokens;
        }
    };
    let (attr, attr_errors) = attr::SkillAttr::parse(attr);
    let model = ast::SkillFn::from_item(&function);
    let mut errors = validate::Errors::default();
    for error in attr_errors.into_iter().chain(model.errors.iter().cloned()) {
        errors.push(error);
    }
    validate::validate(&attr, &model, &mut errors);
    match errors.finish() {
        Ok(()) => expand::expand(&attr, &model),
        Err(error) => {
            // Keep the function, so its other uses do not fail with "not found" on top.
            let mut tokens = error.into_compile_error();
            let item = expand::strip_arg_attrs(&function);
            tokens.extend(quote::quote!(#item));
            tokens
        }
    }
}

/// The span of the first token of an item after its attributes (`struct`, `pub`, `impl`, ...).
fn item_keyword_span(item: &proc_macro2::TokenStream) -> proc_macro2::Span {
    use proc_macro2::TokenTree;
    let mut tokens = item.clone().into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                tokens.next_if(|t| matches!(t, TokenTree::Group(_)));
            }
            other => return other.span(),
        }
    }
    proc_macro2::Span::call_site()
}
