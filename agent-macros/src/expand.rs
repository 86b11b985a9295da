//! Emitting the code of a valid skill: the original function, a unit struct implementing
//! `Skill`, the hidden input struct, the checks that turn trait-bound errors into one sentence at
//! the user's tokens, and the `inventory` registration. Every generated path goes through the
//! runtime crate's `__private` re-exports, so the user's crate needs no serde, schemars,
//! async-trait or inventory dependency of its own.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, LitStr, Type};

use crate::ast::{ParamKind, SkillFn};
use crate::attr::SkillAttr;
use crate::validate::{parse_timeout, skill_name, unraw};

/// The whole expansion of a skill that passed validation.
pub fn expand(attr: &SkillAttr, skill: &SkillFn) -> TokenStream {
    let krate = crate_path(attr);
    let item = strip_arg_attrs(skill.item);
    let fn_ident = &skill.item.sig.ident;
    let vis = &skill.item.vis;
    let struct_ident = Ident::new(&upper_camel(&unraw(fn_ident)), fn_ident.span());
    let input_ident = format_ident!("{}Input", struct_ident);
    let name = skill_name(attr, skill);
    let description = attr
        .description
        .as_ref()
        .map_or_else(|| skill.description.clone(), LitStr::value);
    let first_line = description.lines().next().unwrap_or_default();
    let struct_doc = format!(
        "The skill `{name}`, made by `#[skill]` from [`{}`]: {first_line}",
        unraw(fn_ident)
    );

    let flag = |f: Option<crate::attr::Flag>| f.is_some_and(|f| f.value);
    let read_only = flag(attr.read_only);
    let destructive = flag(attr.destructive);
    let concurrency_safe = attr.concurrency_safe.map_or(read_only, |f| f.value);
    let defer = flag(attr.defer);
    let aliases = &attr.aliases;
    let search_hint = match &attr.search_hint {
        Some(hint) => quote!(::core::option::Option::Some(#hint)),
        None => quote!(::core::option::Option::None),
    };
    let timeout = match attr
        .timeout
        .as_ref()
        .and_then(|t| parse_timeout(&t.value()).ok())
    {
        Some(duration) => {
            let millis = duration.as_millis() as u64;
            quote!(::core::option::Option::Some(::core::time::Duration::from_millis(#millis)))
        }
        None => quote!(::core::option::Option::None),
    };

    let serde_path = LitStr::new(
        &format!("{}::__private::serde", path_string(&krate)),
        Span::call_site(),
    );
    let schemars_path = LitStr::new(
        &format!("{}::__private::schemars", path_string(&krate)),
        Span::call_site(),
    );

    let mut fields = Vec::new();
    let mut defaults = Vec::new();
    let mut param_checks = Vec::new();
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
        let default = match &param.options.default {
            None => None,
            Some(None) => Some(quote!(#[serde(default)])),
            Some(Some(expr)) => {
                let helper = format_ident!("__default_{}", unraw(ident));
                let helper_name = LitStr::new(&helper.to_string(), Span::call_site());
                defaults.push(quote_spanned! {expr.span()=>
                    fn #helper() -> #ty { #expr }
                });
                Some(quote!(#[serde(default = #helper_name)]))
            }
        };
        fields.push(quote! { #doc #rename #default pub #ident: #ty, });
        param_checks.push(quote_spanned! {ty.span()=>
            #krate::__private::assert_skill_param::<#ty>();
        });
    }
    // Fields are bound to locals of their own, so a parameter named like the function (`async fn
    // query(query: String)`) does not shadow the function it is passed to.
    let local = |ident: &Ident| format_ident!("__arg_{}", unraw(ident));
    let field_idents: Vec<&Ident> = skill.inputs().filter_map(|p| p.ident.as_ref()).collect();
    let field_locals: Vec<Ident> = field_idents.iter().map(|ident| local(ident)).collect();
    let call_args = skill.params.iter().map(|p| match p.kind {
        ParamKind::Context => quote!(__ctx),
        ParamKind::Input => {
            let ident = local(p.ident.as_ref().expect("validated"));
            quote!(#ident)
        }
    });
    let output_ty: &Type = skill.output.expect("validated: returns a Result");
    let send_span = skill.item.sig.asyncness.map_or(fn_ident.span(), |a| a.span);
    // The user's future must be `Send`; the check is spanned at the function itself.
    let future = quote_spanned! {send_span=>
        #fn_ident(#(#call_args),*)
    };
    let into_output = quote_spanned! {output_ty.span()=>
        #krate::__private::into_skill_output(__value)
    };
    let into_error = quote_spanned! {skill.item.sig.output.span()=>
        (&#krate::__private::ErrorWrap::new(__error)).__into_skill_error()
    };

    // The body's braces carry the function's span: when the user's future is not `Send`, the
    // error (raised where async-trait boxes this body as `dyn Future + Send`) points at the function.
    let run_body = quote_spanned! {send_span=> {
        #[allow(unused_imports)]
        use #krate::__private::{ViaSkillError as _, ViaStdError as _};
        let #input_ident { #(#field_idents: #field_locals),* } = __input;
        match #future.await {
            ::core::result::Result::Ok(__value) => ::core::result::Result::Ok(#into_output),
            ::core::result::Result::Err(__error) => ::core::result::Result::Err(#into_error),
        }
    }};

    let run_fn = quote_spanned! {send_span=>
        #[allow(unused_variables)]
        async fn run(
            &self,
            __input: #input_ident,
            __ctx: &#krate::SkillContext,
        ) -> ::core::result::Result<#krate::SkillOutput, #krate::SkillError> #run_body
    };

    let registration = if attr.register.is_none_or(|r| r.value) {
        quote! {
            fn __construct() -> ::std::boxed::Box<dyn #krate::DynSkill> {
                ::std::boxed::Box::new(#struct_ident)
            }
            #krate::__private::inventory::submit! {
                #krate::SkillRegistration::new(#name, ::core::module_path!(), ::core::file!(), ::core::line!(), __construct)
            }
        }
    } else {
        TokenStream::new()
    };

    quote! {
        #item

        #[doc = #struct_doc]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
        #vis struct #struct_ident;

        const _: () = {
            #[doc(hidden)]
            #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
            #[serde(crate = #serde_path, deny_unknown_fields)]
            #[schemars(crate = #schemars_path)]
            pub struct #input_ident {
                #(#fields)*
            }

            #(#defaults)*

            #[allow(dead_code)]
            fn __check_parameters() {
                #(#param_checks)*
            }

            #[#krate::__private::async_trait::async_trait]
            impl #krate::Skill for #struct_ident {
                type Input = #input_ident;
                fn name(&self) -> &str { #name }
                fn description(&self) -> &str { #description }
                fn is_read_only(&self) -> bool { #read_only }
                fn is_destructive(&self) -> bool { #destructive }
                fn is_concurrency_safe(&self) -> bool { #concurrency_safe }
                fn should_defer(&self) -> bool { #defer }
                fn search_hint(&self) -> ::core::option::Option<&str> { #search_hint }
                fn aliases(&self) -> &[&'static str] { &[#(#aliases),*] }
                fn timeout(&self) -> ::core::option::Option<::core::time::Duration> { #timeout }
                #run_fn
            }

            #registration
        };
    }
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

/// The path of the runtime crate: `crate = path`, else whichever of `agent-core` and the `eugene`
/// facade the user's crate depends on, else `::agent_core`.
fn crate_path(attr: &SkillAttr) -> TokenStream {
    use proc_macro_crate::{FoundCrate, crate_name};
    if let Some(path) = &attr.krate {
        return quote!(#path);
    }
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

fn path_string(path: &TokenStream) -> String {
    path.to_string().replace(' ', "")
}

/// `search_files` → `SearchFiles`.
fn upper_camel(snake: &str) -> String {
    snake
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::upper_camel;

    #[test]
    fn struct_names_are_upper_camel_case() {
        assert_eq!(upper_camel("search_files"), "SearchFiles");
        assert_eq!(upper_camel("read"), "Read");
        assert_eq!(upper_camel("__private_thing_2"), "PrivateThing2");
    }
}
