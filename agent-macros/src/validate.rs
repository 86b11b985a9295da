//! Checks the model before anything is generated. Each rule is one function that reports to the
//! [`Ctxt`] at the tokens the user must change, with one sentence that says how; every rule runs,
//! so one build shows every mistake.

use proc_macro2::{Span, TokenStream};
use syn::Type;

use crate::ast::{ParamKind, SkillFn};
use crate::ctxt::Ctxt;
use crate::names::{closest, is_valid_name, unraw};

/// Runs every rule, in the order their errors are listed.
pub fn check(cx: &Ctxt, skill: &SkillFn) {
    signature_is_a_plain_async_fn(cx, skill);
    no_receiver(cx, skill);
    no_generics(cx, skill);
    parameters_are_named(cx, skill);
    parameters_are_owned(cx, skill);
    at_most_one_context(cx, skill);
    returns_a_result(cx, skill);
    ok_type_is_owned(cx, skill);
    arguments_doc_names_parameters(cx, skill);
    every_parameter_is_described(cx, skill);
    field_names_are_unique(cx, skill);
    name_is_valid(cx, skill);
    struct_name_is_not_the_function(cx, skill);
    aliases_are_valid(cx, skill);
    timeout_is_valid(cx, skill);
    read_only_is_not_destructive(cx, skill);
    has_a_description(cx, skill);
}

/// The error for an item that is not a function at all, at its first keyword.
pub fn not_a_function(item: &TokenStream) -> syn::Error {
    syn::Error::new(
        item_keyword_span(item),
        "#[skill] goes on an `async fn`; it cannot be used on other items",
    )
}

/// The span of the first token of an item after its attributes (`struct`, `pub`, `impl`, ...).
fn item_keyword_span(item: &TokenStream) -> Span {
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
    Span::call_site()
}

/// `async fn`, not `const`, `unsafe`, `extern` or variadic.
fn signature_is_a_plain_async_fn(cx: &Ctxt, skill: &SkillFn) {
    let sig = &skill.item.sig;
    if sig.asyncness.is_none() {
        cx.error_at(
            sig.fn_token.span,
            "a skill must be an `async fn`: add `async` before `fn`",
        );
    }
    if let Some(token) = &sig.constness {
        cx.error_at(token.span, "a skill cannot be a `const fn`: remove `const`");
    }
    if let Some(token) = &sig.unsafety {
        cx.error_at(
            token.span,
            "a skill cannot be an `unsafe fn`: the model cannot uphold its safety contract; remove `unsafe`",
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "a skill cannot have an `extern` ABI: remove it");
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, "a skill cannot be variadic");
    }
}

/// No `self`: a skill is a free function.
fn no_receiver(cx: &Ctxt, skill: &SkillFn) {
    for span in &skill.receivers {
        cx.error_at(
            *span,
            "a skill is a free function, not a method: remove `self` and reach shared state through \
             `ctx: &SkillContext` (`ctx.extension::<T>()`)",
        );
    }
}

/// No generic parameters and no `where` clause: the schema must be known.
fn no_generics(cx: &Ctxt, skill: &SkillFn) {
    let generics = &skill.item.sig.generics;
    if !generics.params.is_empty() {
        cx.error_spanned_by(
            &generics.params,
            "a skill cannot be generic: its input schema must be known at compile time; use concrete types",
        );
    }
    if let Some(where_clause) = &generics.where_clause {
        cx.error_spanned_by(
            where_clause,
            "a skill cannot have a `where` clause: use concrete types",
        );
    }
}

/// Every input parameter is a plain name, which becomes a field.
fn parameters_are_named(cx: &Ctxt, skill: &SkillFn) {
    for param in skill.inputs() {
        if param.ident.is_none() {
            cx.error_spanned_by(
                param.pat,
                "a skill parameter must be a plain name (it becomes a field of the input): \
                 write `name: Type` and destructure inside the function",
            );
        }
    }
}

/// Every input parameter's type is owned, so it can be deserialized.
fn parameters_are_owned(cx: &Ctxt, skill: &SkillFn) {
    for param in skill.inputs() {
        check_owned(cx, param.ty);
    }
}

/// Reports a reference, `impl Trait` or a type with a lifetime, looking through parentheses.
fn check_owned(cx: &Ctxt, ty: &Type) {
    match ty {
        Type::Reference(reference) => {
            let suggestion = owned_suggestion(&reference.elem);
            cx.error_spanned_by(
                ty,
                format!("skill parameters are deserialized from the model's JSON and must be owned: use `{suggestion}` instead"),
            );
        }
        Type::ImplTrait(_) => cx.error_spanned_by(
            ty,
            "a skill parameter cannot be `impl Trait`: its schema must be known; use a concrete type",
        ),
        Type::Paren(inner) => check_owned(cx, &inner.elem),
        Type::Group(inner) => check_owned(cx, &inner.elem),
        Type::Path(path) => {
            let has_lifetime = path.path.segments.iter().any(|s| match &s.arguments {
                syn::PathArguments::AngleBracketed(args) => args
                    .args
                    .iter()
                    .any(|a| matches!(a, syn::GenericArgument::Lifetime(_))),
                _ => false,
            });
            if has_lifetime {
                cx.error_spanned_by(
                    ty,
                    "skill parameters must be owned: remove the lifetime and use an owned type",
                );
            }
        }
        _ => {}
    }
}

/// The owned type to suggest for `&elem`: `String` for `str`, `PathBuf` for `Path`, `Vec<T>` for
/// `[T]`, else `elem` itself.
fn owned_suggestion(elem: &Type) -> String {
    let text = quote::quote!(#elem).to_string().replace(' ', "");
    match elem {
        Type::Path(p) if p.path.is_ident("str") => "String".to_owned(),
        Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Path") => {
            "PathBuf".to_owned()
        }
        Type::Slice(slice) => {
            let inner = &slice.elem;
            format!(
                "Vec<{}>",
                quote::quote!(#inner).to_string().replace(' ', "")
            )
        }
        _ => text,
    }
}

/// One `&SkillContext` at most, borrowed (not by value) and shared (not `&mut`).
fn at_most_one_context(cx: &Ctxt, skill: &SkillFn) {
    let mut contexts = skill
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Context));
    let _first = contexts.next();
    for extra in contexts {
        cx.error_spanned_by(
            extra.ty,
            "a skill takes at most one `&SkillContext` parameter: remove this one",
        );
    }
    for param in &skill.params {
        if let (ParamKind::Context, Type::Reference(r)) = (&param.kind, param.ty)
            && let Some(m) = &r.mutability
        {
            cx.error_at(
                m.span,
                "the context is shared: take `&SkillContext`, not `&mut SkillContext`",
            );
        }
        if matches!(param.kind, ParamKind::Context) && crate::ast::is_context_path(param.ty) {
            cx.error_spanned_by(
                param.ty,
                "the context is lent to the skill for the call: take `&SkillContext`, not \
                 `SkillContext` by value",
            );
        }
    }
}

/// The return type is a `Result`.
fn returns_a_result(cx: &Ctxt, skill: &SkillFn) {
    if skill.output.is_some() {
        return;
    }
    let sig = &skill.item.sig;
    let message = "a skill must return `Result<T, E>` where `T` is a `String`, a `&str`, a \
                   `serde_json::Value`, a `SkillOutput` or any type with `Serialize` and \
                   `JsonSchema`, and `E: Into<SkillError>` or any error type";
    match &sig.output {
        syn::ReturnType::Default => cx.error_at(sig.paren_token.span.close(), message),
        syn::ReturnType::Type(_, ty) => cx.error_spanned_by(ty, message),
    }
}

/// The `Ok` type is named and outlives the call: a reference must be `&'static` (a borrow from the
/// context would end with the call; rustc would say only that borrowed data escapes), and
/// `impl Trait` has no schema to generate.
fn ok_type_is_owned(cx: &Ctxt, skill: &SkillFn) {
    let Some(ty) = skill.output else { return };
    match ty {
        Type::Reference(reference)
            if reference
                .lifetime
                .as_ref()
                .is_none_or(|l| l.ident != "static") =>
        {
            let suggestion = owned_suggestion(&reference.elem);
            cx.error_spanned_by(
                ty,
                format!(
                    "a skill's result outlives the call and must be owned (or `'static`): \
                     return `{suggestion}` instead"
                ),
            );
        }
        Type::ImplTrait(_) => cx.error_spanned_by(
            ty,
            "a skill cannot return `impl Trait`: its output schema is generated from the type; \
             name a concrete type",
        ),
        _ => {}
    }
}

/// Every `# Arguments` entry names an input parameter.
fn arguments_doc_names_parameters(cx: &Ctxt, skill: &SkillFn) {
    let names: Vec<String> = skill
        .inputs()
        .filter_map(|p| p.ident.as_ref())
        .map(unraw)
        .collect();
    for entry in &skill.args_doc {
        if !names.contains(&entry.name) {
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let hint = match closest(&entry.name, &refs) {
                Some(close) => format!("; did you mean `{close}`?"),
                None if names.is_empty() => "; the skill has no parameters".to_owned(),
                None => format!("; the parameters are: {}", names.join(", ")),
            };
            cx.error_at(
                entry.span,
                format!(
                    "`# Arguments` describes `{}`, which is not a parameter{hint}",
                    entry.name
                ),
            );
        }
    }
}

/// Every input parameter has a description the model reads (its `# Arguments` entry), unless it
/// is marked `#[arg(undocumented)]`; a parameter is not both.
fn every_parameter_is_described(cx: &Ctxt, skill: &SkillFn) {
    for param in skill.inputs() {
        let Some(ident) = &param.ident else { continue };
        let name = unraw(ident);
        let described = skill.arg_doc(&name).filter(|text| !text.trim().is_empty());
        match (described, param.options.undocumented) {
            (None, None) => cx.error_at(
                ident.span(),
                format!(
                    "the model is not told what `{name}` is: describe it under `# Arguments` in \
                     the doc comment (`/// * `{name}` - what it is.`), or mark it \
                     `#[arg(undocumented)]` if its name says it all"
                ),
            ),
            (Some(_), Some(span)) => cx.error_at(
                span,
                format!(
                    "`{name}` is described under `# Arguments` and marked `undocumented`: remove \
                     one"
                ),
            ),
            _ => {}
        }
    }
}

/// No two input fields have the same name in the schema, renames included.
fn field_names_are_unique(cx: &Ctxt, skill: &SkillFn) {
    let mut seen: Vec<String> = Vec::new();
    for param in skill.inputs() {
        let Some(ident) = &param.ident else { continue };
        let (name, span) = match &param.options.rename {
            Some(rename) => (rename.value(), rename.span()),
            None => (unraw(ident), ident.span()),
        };
        if seen.contains(&name) {
            cx.error_at(
                span,
                format!("two parameters are named `{name}` in the schema: rename one"),
            );
        }
        seen.push(name);
    }
}

/// `name = "..."` is a name model APIs accept.
fn name_is_valid(cx: &Ctxt, skill: &SkillFn) {
    if let Some(name) = &skill.attr.name
        && !is_valid_name(&name.value())
    {
        cx.error_at(
            name.span(),
            format!(
                "`{}` is not a valid skill name: use 1 to 64 ASCII letters, digits, `_` or `-`",
                name.value()
            ),
        );
    }
}

/// `struct_name = ...` is not the function's own name: a unit struct is also a value, and the
/// function would hide it.
fn struct_name_is_not_the_function(cx: &Ctxt, skill: &SkillFn) {
    if let Some(struct_name) = &skill.attr.struct_name
        && unraw(struct_name) == unraw(&skill.item.sig.ident)
    {
        cx.error_at(
            struct_name.span(),
            format!(
                "`struct_name = {struct_name}` is the function's own name: the unit struct is also a value, \
                 which the function would hide; choose another name, e.g. `{}`",
                crate::names::struct_name(&unraw(struct_name))
            ),
        );
    }
}

/// Each alias is a valid name, not the skill's own, and listed once.
fn aliases_are_valid(cx: &Ctxt, skill: &SkillFn) {
    let name = skill.name();
    let mut seen: Vec<String> = Vec::new();
    for alias in &skill.attr.aliases {
        let value = alias.value();
        if value == name {
            cx.error_at(
                alias.span(),
                format!("alias `{value}` is the skill's own name: remove it"),
            );
        } else if !is_valid_name(&value) {
            cx.error_at(
                alias.span(),
                format!(
                    "`{value}` is not a valid alias: use 1 to 64 ASCII letters, digits, `_` or `-`"
                ),
            );
        } else if seen.contains(&value) {
            cx.error_at(
                alias.span(),
                format!("alias `{value}` is listed twice: remove one"),
            );
        }
        seen.push(value);
    }
}

/// `timeout = "..."` parsed (in `attr`) into a duration.
fn timeout_is_valid(cx: &Ctxt, skill: &SkillFn) {
    if let Some(timeout) = &skill.attr.timeout
        && let Err(message) = &timeout.duration
    {
        cx.error_at(timeout.lit.span(), message);
    }
}

/// `read_only` and `destructive` are not both true.
fn read_only_is_not_destructive(cx: &Ctxt, skill: &SkillFn) {
    if let (Some(read_only), Some(destructive)) = (skill.attr.read_only, skill.attr.destructive)
        && read_only.value
        && destructive.value
    {
        cx.error_at(
            destructive.span,
            "a skill cannot be both `read_only` and `destructive`: keep the one that is true",
        );
    }
}

/// There is a description for the model: `description = "..."` or a doc comment.
fn has_a_description(cx: &Ctxt, skill: &SkillFn) {
    let attr = &skill.attr;
    let explicit = attr.description.as_ref().map(|d| d.value());
    let empty = match &explicit {
        Some(text) => text.trim().is_empty(),
        None => skill.description.is_empty(),
    };
    if empty {
        let span = attr
            .description
            .as_ref()
            .map_or(skill.item.sig.ident.span(), |d| d.span());
        cx.error_at(
            span,
            "a skill needs a description the model can read: add a doc comment (`/// What it does.`) \
             or `#[skill(description = \"...\")]`",
        );
    }
}
