//! Emitting the code of a skill that passed validation, in named parts: the original function,
//! the unit struct (in a hidden module, glob-imported), the check that its name is free, the hidden
//! input struct (with the checks that turn trait-bound errors into one sentence at the user's
//! tokens), the `Skill` impl and the `inventory` registration. Nothing here judges: the model is
//! valid. Every generated path starts at the runtime crate: the derives go through its public
//! `serde` and `schemars` re-exports (so errors name paths the user can write), everything else
//! through `__private`; the user's crate needs no serde, schemars, async-trait or inventory
//! dependency of its own.
//!
//! Names: the unit struct is the only generated name the user is meant to write. Everything else
//! lives in an anonymous `const _` block, where the user's tokens (parameter types, default
//! expressions, the function's name) are resolved too; each generated name there steps aside
//! ([`fresh`]) from every identifier the user wrote, so it can never shadow one of theirs.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, LitStr, Type};

use crate::ast::{ParamKind, SkillFn};
use crate::attr::{SkillAttr, Timeout};
use crate::names::{fresh, hidden_module, unraw};

/// The names every part of the expansion refers to.
struct Idents {
    /// The runtime crate: `::agent_core`, `::eugene` or the `crate = path` given.
    krate: TokenStream,
    /// The unit struct's name, as the user writes it: `{Function}Skill` or `struct_name`.
    unit: Ident,
    /// The private module the unit struct is defined in: `__skill_{function}`.
    module: Ident,
    /// The path the expansion names the unit struct by: `{module}::{unit}`, which a type of the
    /// user's with the struct's name cannot shadow.
    unit_path: TokenStream,
    /// The hidden input struct: `{unit}Input`, made [`fresh`].
    input: Ident,
    /// The skill's name, as the model sees it.
    name: String,
    /// Every identifier the user wrote, which generated names in the `const _` block avoid.
    taken: HashSet<String>,
}

impl Idents {
    /// A name for a generated item or local beside the user's tokens: `base`, unless the user
    /// wrote `base` somewhere, then `_base`, `__base`, ...
    fn fresh(&self, base: &str) -> Ident {
        Ident::new(&fresh(base, &self.taken), Span::call_site())
    }
}

/// The whole expansion of a valid skill.
pub fn expand(skill: &SkillFn) -> TokenStream {
    let fn_ident = &skill.item.sig.ident;
    let unit = skill.struct_ident();
    let module = Ident::new(&hidden_module(&unraw(fn_ident)), fn_ident.span());
    let taken = skill.user_names();
    let idents = Idents {
        krate: crate_path(&skill.attr),
        input: Ident::new(
            &fresh(&format!("{}Input", unraw(&unit)), &taken),
            Span::call_site(),
        ),
        unit_path: quote!(#module::#unit),
        unit,
        module,
        name: skill.name(),
        taken,
    };
    let function = strip_arg_attrs(skill.item);
    let unit_struct = unit_struct(skill, &idents);
    let name_check = struct_name_check(skill, &idents);
    let input_struct = input_struct(skill, &idents);
    let skill_impl = skill_impl(skill, &idents);
    let registration = registration(skill, &idents);
    quote! {
        #function

        #unit_struct

        const _: () = {
            #name_check

            #input_struct

            #skill_impl

            #registration
        };
    }
}

/// What is emitted for a skill with mistakes: the errors, then `item` (so its other uses do not
/// fail with "not found" on top).
pub fn errors_and(error: syn::Error, item: impl ToTokens) -> TokenStream {
    let mut tokens = error.into_compile_error();
    item.to_tokens(&mut tokens);
    tokens
}

/// The function as the user wrote it, minus the `#[arg]` attributes only this macro understands.
pub fn strip_arg_attrs(item: &ItemFn) -> ItemFn {
    let mut item = item.clone();
    for input in &mut item.sig.inputs {
        if let FnArg::Typed(typed) = input {
            typed.attrs.retain(|a| !a.path().is_ident("arg"));
        }
    }
    item
}

/// The unit struct the skill is used through (`registry.add(SearchFilesSkill)`), with the
/// function's visibility. It is defined in a private module of its own and glob-imported into the
/// function's module: an item or import of the user's with the same name then shadows the import
/// instead of clashing with it (which would bury the cause under errors about derives and impls
/// that land on the user's type), and [`struct_name_check`] says what happened, once.
fn unit_struct(skill: &SkillFn, idents: &Idents) -> TokenStream {
    let Idents {
        unit, module, name, ..
    } = idents;
    let vis = &skill.item.vis;
    let description = description(skill);
    let first_line = description.lines().next().unwrap_or_default();
    let fn_ident = &skill.item.sig.ident;
    // A raw identifier cannot be written in an intra-doc link (`#` starts a fragment).
    let function = if fn_ident.to_string().starts_with("r#") {
        format!("`{}`", unraw(fn_ident))
    } else {
        format!("[`{fn_ident}`](super::{fn_ident})")
    };
    let doc = format!("The skill `{name}`, made by `#[skill]` from {function}: {first_line}");
    quote! {
        #[allow(non_snake_case)]
        mod #module {
            #[doc = #doc]
            #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
            pub struct #unit;
        }

        #[allow(unused_imports)]
        #vis use #module::*;
    }
}

/// Fails to compile unless the unit struct's name, as the user's module resolves it, is the
/// generated struct: a type of the user's with the same name gets one sentence at the function's
/// name (or at `struct_name`'s value) that says what `#[skill]` generates and which key renames it.
fn struct_name_check(skill: &SkillFn, idents: &Idents) -> TokenStream {
    let Idents {
        unit, unit_path, ..
    } = idents;
    let function = unraw(&skill.item.sig.ident);
    let message = format!(
        "`#[skill]` on `{function}` generates a unit struct `{unit}`, but `{unit}` already names \
         another type in this module: rename that type, or name the generated struct with \
         `#[skill(struct_name = ...)]`"
    );
    let label = format!("`#[skill]` generates `{unit}` here");
    let is_generated = idents.fresh(&format!("__{}IsGenerated", unraw(unit)));
    let check = idents.fresh("__check_struct_name");
    let assert = idents.fresh("__made_by_skill");
    let assertion = quote_spanned! {unit.span()=>
        #assert::<#unit>();
    };
    quote! {
        #[diagnostic::on_unimplemented(message = #message, label = #label)]
        trait #is_generated {}
        impl #is_generated for #unit_path {}

        #[allow(dead_code)]
        fn #check() {
            fn #assert<T: #is_generated>() {}
            #assertion
        }
    }
}

/// The hidden input struct, one documented field per input parameter, deriving `Deserialize` and
/// `JsonSchema`, each field's type checked by `SkillParam` at the user's tokens; and the helpers
/// its `#[arg(default = expr)]` fields name.
fn input_struct(skill: &SkillFn, idents: &Idents) -> TokenStream {
    let Idents { krate, input, .. } = idents;
    let serde_path = public_path(krate, "serde");
    let schemars_path = public_path(krate, "schemars");
    let where_clause = param_bounds(skill, krate);
    let mut fields = Vec::new();
    let mut defaults = Vec::new();
    for param in skill.inputs() {
        let ident = param
            .ident
            .as_ref()
            .expect("validated: parameters are plain names");
        let ty = param.ty;
        let doc = skill
            .arg_doc(&unraw(ident))
            .map(|text| quote!(#[doc = #text]));
        let rename = param
            .options
            .rename
            .as_ref()
            .map(|r| quote!(#[serde(rename = #r)]));
        let checked = checked_type(ty, krate);
        // Both kinds of default go through a helper that returns the field's type, so the field
        // needs nothing (`Default`) beyond what `SkillParam` promises.
        let default = param.options.default.as_ref().map(|expr| {
            let value = match expr {
                Some(expr) => quote_spanned! {expr.span()=> #expr },
                None => quote_spanned! {ty.span()=> <#ty as ::core::default::Default>::default() },
            };
            let helper = idents.fresh(&format!("__default_{}", unraw(ident)));
            let helper_name = LitStr::new(&helper.to_string(), Span::call_site());
            defaults.push(quote! {
                fn #helper() -> #checked #where_clause {
                    #krate::__private::SkillParam::into_checked(#value)
                }
            });
            quote!(#[serde(default = #helper_name)])
        });
        fields.push(quote! { #doc #rename #default pub #ident: #checked, });
    }
    quote! {
        #[doc(hidden)]
        #[derive(#krate::serde::Deserialize, #krate::schemars::JsonSchema)]
        #[serde(crate = #serde_path, deny_unknown_fields)]
        #[schemars(crate = #schemars_path)]
        pub struct #input #where_clause {
            #(#fields)*
        }

        #(#defaults)*
    }
}

/// `where T: SkillParam, ...` for every parameter type, each bound spanned at the user's type, or
/// nothing for a skill without parameters. The input struct, its derives (which copy a struct's
/// `where` clause), the default helpers and the `Skill` impl all carry it: a type that cannot be
/// a parameter fails this bound, at its own tokens, with one sentence (the copies of the error
/// are one diagnostic, which rustc prints once), and every item that carries it may assume it, so
/// nothing else fails for that type.
fn param_bounds(skill: &SkillFn, krate: &TokenStream) -> TokenStream {
    let bounds: Vec<TokenStream> = skill
        .inputs()
        .map(|param| {
            let ty = param.ty;
            // The crate's path is respanned too: a bound whose tokens came from two places
            // would be reported at `#[skill]` instead of at the type.
            let krate = respan(krate, ty.span());
            quote_spanned! {ty.span()=> #ty: #krate::__private::SkillParam }
        })
        .collect();
    if bounds.is_empty() {
        TokenStream::new()
    } else {
        quote!(where #(#bounds),*)
    }
}

/// `<T as SkillParam>::Checked`, the type of a parameter's field, spanned at the user's type.
fn checked_type(ty: &Type, krate: &TokenStream) -> TokenStream {
    let krate = respan(krate, ty.span());
    quote_spanned! {ty.span()=> <#ty as #krate::__private::SkillParam>::Checked }
}

/// `tokens` with every token (groups included) spanned at `span`.
fn respan(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(&group.stream(), span));
                inner.set_span(span);
                token = proc_macro2::TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

/// `impl Skill for {module}::{unit}`: the attribute's settings as methods, and `run`, which calls the
/// function with the input's fields and converts its result.
fn skill_impl(skill: &SkillFn, idents: &Idents) -> TokenStream {
    let Idents {
        krate,
        unit_path,
        input,
        name,
        ..
    } = idents;
    let attr = &skill.attr;
    let description = description(skill);
    let flag = |f: Option<crate::attr::Flag>| f.is_some_and(|f| f.value);
    let read_only = flag(attr.read_only);
    let destructive = flag(attr.destructive);
    let concurrency_safe = attr.concurrency_safe.map_or(read_only, |f| f.value);
    let idempotent = attr.idempotent.map_or(read_only, |f| f.value);
    let defer = flag(attr.defer);
    let aliases = &attr.aliases;
    let search_hint = match &attr.search_hint {
        Some(hint) => quote!(::core::option::Option::Some(#hint)),
        None => quote!(::core::option::Option::None),
    };
    let timeout = match &attr.timeout {
        Some(Timeout {
            duration: Ok(duration),
            ..
        }) => {
            let millis = duration.as_millis() as u64;
            quote!(::core::option::Option::Some(::core::time::Duration::from_millis(#millis)))
        }
        _ => quote!(::core::option::Option::None),
    };
    let run_fn = run_fn(skill, idents);
    let output_schema_fn = output_schema_fn(skill, idents);
    let where_clause = param_bounds(skill, krate);
    quote! {
        #[#krate::__private::async_trait::async_trait]
        impl #krate::Skill for #unit_path #where_clause {
            type Input = #input;
            fn name(&self) -> &str { #name }
            fn description(&self) -> &str { #description }
            fn is_read_only(&self) -> bool { #read_only }
            fn is_destructive(&self) -> bool { #destructive }
            fn is_concurrency_safe(&self) -> bool { #concurrency_safe }
            fn is_idempotent(&self) -> bool { #idempotent }
            fn should_defer(&self) -> bool { #defer }
            fn search_hint(&self) -> ::core::option::Option<&str> { #search_hint }
            fn aliases(&self) -> &[&'static str] { &[#(#aliases),*] }
            fn timeout(&self) -> ::core::option::Option<::core::time::Duration> { #timeout }
            #output_schema_fn
            #run_fn
        }
    }
}

/// `Skill::output_schema`: the schema of the `Ok` type, when it has one (a typed value, not text).
/// A type that cannot be returned is reported once, by [`run_fn`]'s conversion: this method then
/// falls back to `None` instead of failing a second time.
fn output_schema_fn(skill: &SkillFn, idents: &Idents) -> TokenStream {
    let krate = &idents.krate;
    let output_ty: &Type = skill.output.expect("validated: returns a Result");
    quote! {
        fn output_schema(&self) -> ::core::option::Option<#krate::__private::serde_json::Value> {
            #[allow(unused_imports)]
            use #krate::__private::{ViaSkillReturn as _, ViaNoSchema as _};
            (&#krate::__private::OutputSchemaOf::<#output_ty>::new()).__output_schema()
        }
    }
}

/// `Skill::run`: destructures the input, awaits the function and converts `Ok` into a
/// `SkillOutput` (or the error that it could not be serialized) and `Err` into a `SkillError`,
/// each conversion spanned at the user's return type so a type that does not convert is reported
/// there.
fn run_fn(skill: &SkillFn, idents: &Idents) -> TokenStream {
    let Idents { krate, input, .. } = idents;
    let fn_ident = &skill.item.sig.ident;
    // Fields are bound to locals of their own, so a parameter named like the function (`async fn
    // query(query: String)`) does not shadow the function it is passed to. Every local is fresh:
    // none can shadow the function either.
    let local = |ident: &Ident| idents.fresh(&format!("__arg_{}", unraw(ident)));
    let output_ty: &Type = skill.output.expect("validated: returns a Result");
    let send_span = skill.item.sig.asyncness.map_or(fn_ident.span(), |a| a.span);
    // Each local carries the span of the code it is written in, so rustc points where it did
    // before the names were made fresh.
    let at = |ident: &Ident, span: Span| Ident::new(&ident.to_string(), span);
    let (input_local, ctx, value, error) = (
        at(&idents.fresh("__input"), send_span),
        idents.fresh("__ctx"),
        at(&idents.fresh("__value"), send_span),
        at(&idents.fresh("__error"), send_span),
    );
    let ctx_param = at(&ctx, send_span);
    let value_out = at(&value, output_ty.span());
    let error_out = at(&error, skill.item.sig.output.span());
    let field_idents: Vec<&Ident> = skill.inputs().filter_map(|p| p.ident.as_ref()).collect();
    let field_locals: Vec<Ident> = field_idents.iter().map(|ident| local(ident)).collect();
    let call_args = skill.params.iter().map(|p| match p.kind {
        ParamKind::Context => quote!(#ctx),
        ParamKind::Input => {
            let ident = local(p.ident.as_ref().expect("validated"));
            let ty = p.ty;
            quote!(<#ty as #krate::__private::SkillParam>::from_checked(#ident))
        }
    });
    // The user's future must be `Send`; the check is spanned at the function itself.
    let future = quote_spanned! {send_span=>
        #fn_ident(#(#call_args),*)
    };
    // The type is named, so a type that cannot be returned is reported on all of it
    // (`std::time::Instant`, not just `std`).
    let into_output = quote_spanned! {output_ty.span()=>
        #krate::__private::into_skill_output::<#output_ty>(#value_out)
    };
    let into_error = quote_spanned! {skill.item.sig.output.span()=>
        (&#krate::__private::ErrorWrap::new(#error_out)).__into_skill_error()
    };
    // The body's braces carry the function's span: when the user's future is not `Send`, the
    // error (raised where async-trait boxes this body as `dyn Future + Send`) points at the function.
    let body = quote_spanned! {send_span=> {
        #[allow(unused_imports)]
        use #krate::__private::{ViaSkillError as _, ViaStdError as _};
        let #input { #(#field_idents: #field_locals),* } = #input_local;
        match #future.await {
            ::core::result::Result::Ok(#value) => #into_output,
            ::core::result::Result::Err(#error) => ::core::result::Result::Err(#into_error),
        }
    }};
    quote_spanned! {send_span=>
        #[allow(unused_variables)]
        async fn run(
            &self,
            #input_local: #input,
            #ctx_param: &#krate::SkillContext,
        ) -> ::core::result::Result<#krate::SkillOutput, #krate::SkillError> #body
    }
}

/// The `inventory` registration `Registry::discover()` finds, unless `register = false`.
fn registration(skill: &SkillFn, idents: &Idents) -> TokenStream {
    let Idents {
        krate,
        unit_path,
        name,
        ..
    } = idents;
    if skill.attr.register.is_some_and(|r| !r.value) {
        return TokenStream::new();
    }
    let construct = idents.fresh("__construct");
    quote! {
        fn #construct() -> ::std::boxed::Box<dyn #krate::DynSkill> {
            // Through method resolution, so that a `Skill` impl whose parameter bounds fail is
            // reported once, there, and not again here.
            #[allow(unused_imports)]
            use #krate::__private::{ViaSkill as _, ViaUnbuilt as _};
            (&#krate::__private::ConstructOf::<#unit_path>::new()).__construct()
        }
        #krate::__private::inventory::submit! {
            #krate::SkillRegistration::new(#name, ::core::module_path!(), ::core::file!(), ::core::line!(), #construct)
        }
    }
}

/// The description the model reads: `description = "..."` or the doc comment.
fn description(skill: &SkillFn) -> String {
    skill
        .attr
        .description
        .as_ref()
        .map_or_else(|| skill.description.clone(), LitStr::value)
}

/// The path of the runtime crate: `crate = path`, else [`runtime_crate`].
fn crate_path(attr: &SkillAttr) -> TokenStream {
    match &attr.krate {
        Some(path) => quote!(#path),
        None => runtime_crate(),
    }
}

/// The path of the runtime crate as the calling crate names it: whichever of `agent-core` and the
/// `eugene` facade it depends on (renamed or not), else `::agent_core`. Shared with
/// `agent_skills!`.
pub fn runtime_crate() -> TokenStream {
    use proc_macro_crate::{FoundCrate, crate_name};
    for (package, lib) in [("agent-core", "agent_core"), ("eugene", "eugene")] {
        match crate_name(package) {
            Ok(FoundCrate::Name(name)) => {
                let ident = Ident::new(&name, Span::call_site());
                return quote!(::#ident);
            }
            Ok(FoundCrate::Itself) => {
                let ident = Ident::new(lib, Span::call_site());
                return quote!(::#ident);
            }
            Err(_) => {}
        }
    }
    quote!(::agent_core)
}

/// `"{krate}::{module}"` as a string literal, for `#[serde(crate = "...")]` and
/// `#[schemars(crate = "...")]`: the runtime crate's public re-export, so an error about a derive
/// names a path the user can write too (`eugene::schemars::JsonSchema`).
fn public_path(krate: &TokenStream, module: &str) -> LitStr {
    let krate = krate.to_string().replace(' ', "");
    LitStr::new(&format!("{krate}::{module}"), Span::call_site())
}
