//! Checks a parsed skill before anything is generated. Each rule is one function that reports at
//! the tokens the user must change, with one sentence that says how; all failures are combined so
//! one build shows every mistake.

use std::time::Duration;

use proc_macro2::Span;
use syn::Type;

use crate::ast::{ParamKind, SkillFn};
use crate::attr::SkillAttr;

/// Collects errors and combines them into one.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    pub fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Runs every check.
pub fn validate(attr: &SkillAttr, skill: &SkillFn, errors: &mut Errors) {
    signature_is_a_plain_async_fn(skill, errors);
    no_receiver(skill, errors);
    no_generics(skill, errors);
    parameters_are_named(skill, errors);
    parameters_are_owned(skill, errors);
    at_most_one_context(skill, errors);
    returns_a_result(skill, errors);
    arguments_doc_names_parameters(skill, errors);
    field_names_are_unique(skill, errors);
    name_is_valid(attr, errors);
    aliases_are_valid(attr, skill, errors);
    timeout_is_valid(attr, errors);
    read_only_is_not_destructive(attr, errors);
    has_a_description(attr, skill, errors);
}

fn signature_is_a_plain_async_fn(skill: &SkillFn, errors: &mut Errors) {
    let sig = &skill.item.sig;
    if sig.asyncness.is_none() {
        errors.at(
            sig.fn_token.span,
            "a skill must be an `async fn`: add `async` before `fn`",
        );
    }
    if let Some(token) = &sig.constness {
        errors.at(token.span, "a skill cannot be a `const fn`: remove `const`");
    }
    if let Some(token) = &sig.unsafety {
        errors.at(token.span, "a skill cannot be an `unsafe fn`: the model cannot uphold its safety contract; remove `unsafe`");
    }
    if let Some(abi) = &sig.abi {
        errors.push(syn::Error::new_spanned(
            abi,
            "a skill cannot have an `extern` ABI: remove it",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(syn::Error::new_spanned(
            variadic,
            "a skill cannot be variadic",
        ));
    }
}

fn no_receiver(skill: &SkillFn, errors: &mut Errors) {
    for span in &skill.receivers {
        errors.at(
            *span,
            "a skill is a free function, not a method: remove `self` and reach shared state through \
             `ctx: &SkillContext` (`ctx.extension::<T>()`)",
        );
    }
}

fn no_generics(skill: &SkillFn, errors: &mut Errors) {
    let generics = &skill.item.sig.generics;
    if !generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &generics.params,
            "a skill cannot be generic: its input schema must be known at compile time; use concrete types",
        ));
    }
    if let Some(where_clause) = &generics.where_clause {
        errors.push(syn::Error::new_spanned(
            where_clause,
            "a skill cannot have a `where` clause: use concrete types",
        ));
    }
}

fn parameters_are_named(skill: &SkillFn, errors: &mut Errors) {
    for param in skill.inputs() {
        if param.ident.is_none() {
            errors.push(syn::Error::new_spanned(
                param.pat,
                "a skill parameter must be a plain name (it becomes a field of the input): \
                 write `name: Type` and destructure inside the function",
            ));
        }
    }
}

fn parameters_are_owned(skill: &SkillFn, errors: &mut Errors) {
    for param in skill.inputs() {
        check_owned(param.ty, errors);
    }
}

fn check_owned(ty: &Type, errors: &mut Errors) {
    match ty {
        Type::Reference(reference) => {
            let suggestion = owned_suggestion(&reference.elem);
            errors.push(syn::Error::new_spanned(
                ty,
                format!("skill parameters are deserialized from the model's JSON and must be owned: use `{suggestion}` instead"),
            ));
        }
        Type::ImplTrait(_) => errors.push(syn::Error::new_spanned(
            ty,
            "a skill parameter cannot be `impl Trait`: its schema must be known; use a concrete type",
        )),
        Type::Paren(inner) => check_owned(&inner.elem, errors),
        Type::Group(inner) => check_owned(&inner.elem, errors),
        Type::Path(path) => {
            let has_lifetime = path.path.segments.iter().any(|s| match &s.arguments {
                syn::PathArguments::AngleBracketed(args) => {
                    args.args.iter().any(|a| matches!(a, syn::GenericArgument::Lifetime(_)))
                }
                _ => false,
            });
            if has_lifetime {
                errors.push(syn::Error::new_spanned(
                    ty,
                    "skill parameters must be owned: remove the lifetime and use an owned type",
                ));
            }
        }
        _ => {}
    }
}

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

fn at_most_one_context(skill: &SkillFn, errors: &mut Errors) {
    let mut contexts = skill
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Context));
    let _first = contexts.next();
    for extra in contexts {
        errors.push(syn::Error::new_spanned(
            extra.ty,
            "a skill takes at most one `&SkillContext` parameter: remove this one",
        ));
    }
    for param in &skill.params {
        if let (ParamKind::Context, Type::Reference(r)) = (&param.kind, param.ty)
            && let Some(m) = &r.mutability
        {
            errors.at(
                m.span,
                "the context is shared: take `&SkillContext`, not `&mut SkillContext`",
            );
        }
    }
}

fn returns_a_result(skill: &SkillFn, errors: &mut Errors) {
    if skill.output.is_some() {
        return;
    }
    let sig = &skill.item.sig;
    let message = "a skill must return `Result<T, E>` where `T: Into<SkillOutput>` (a `String`, \
                   `&str`, `serde_json::Value`, ...) and `E: Into<SkillError>` or any error type";
    match &sig.output {
        syn::ReturnType::Default => errors.at(sig.paren_token.span.close(), message),
        syn::ReturnType::Type(_, ty) => errors.push(syn::Error::new_spanned(ty, message)),
    }
}

fn arguments_doc_names_parameters(skill: &SkillFn, errors: &mut Errors) {
    let names: Vec<String> = skill
        .inputs()
        .filter_map(|p| p.ident.as_ref())
        .map(unraw)
        .collect();
    for entry in &skill.args_doc {
        if !names.contains(&entry.name) {
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let hint = match crate::attr::closest(&entry.name, &refs) {
                Some(close) => format!("; did you mean `{close}`?"),
                None if names.is_empty() => "; the skill has no parameters".to_owned(),
                None => format!("; the parameters are: {}", names.join(", ")),
            };
            errors.at(
                entry.span,
                format!(
                    "`# Arguments` describes `{}`, which is not a parameter{hint}",
                    entry.name
                ),
            );
        }
    }
}

fn field_names_are_unique(skill: &SkillFn, errors: &mut Errors) {
    let mut seen: Vec<String> = Vec::new();
    for param in skill.inputs() {
        let Some(ident) = &param.ident else { continue };
        let (name, span) = match &param.options.rename {
            Some(rename) => (rename.value(), rename.span()),
            None => (unraw(ident), ident.span()),
        };
        if seen.contains(&name) {
            errors.at(
                span,
                format!("two parameters are named `{name}` in the schema: rename one"),
            );
        }
        seen.push(name);
    }
}

fn name_is_valid(attr: &SkillAttr, errors: &mut Errors) {
    if let Some(name) = &attr.name
        && !is_valid_name(&name.value())
    {
        errors.at(
            name.span(),
            format!(
                "`{}` is not a valid skill name: use 1 to 64 ASCII letters, digits, `_` or `-`",
                name.value()
            ),
        );
    }
}

fn aliases_are_valid(attr: &SkillAttr, skill: &SkillFn, errors: &mut Errors) {
    let name = skill_name(attr, skill);
    let mut seen: Vec<String> = Vec::new();
    for alias in &attr.aliases {
        let value = alias.value();
        if value == name {
            errors.at(
                alias.span(),
                format!("alias `{value}` is the skill's own name: remove it"),
            );
        } else if !is_valid_name(&value) {
            errors.at(
                alias.span(),
                format!(
                    "`{value}` is not a valid alias: use 1 to 64 ASCII letters, digits, `_` or `-`"
                ),
            );
        } else if seen.contains(&value) {
            errors.at(
                alias.span(),
                format!("alias `{value}` is listed twice: remove one"),
            );
        }
        seen.push(value);
    }
}

fn timeout_is_valid(attr: &SkillAttr, errors: &mut Errors) {
    if let Some(timeout) = &attr.timeout
        && let Err(message) = parse_timeout(&timeout.value())
    {
        errors.at(timeout.span(), message);
    }
}

fn read_only_is_not_destructive(attr: &SkillAttr, errors: &mut Errors) {
    if let (Some(read_only), Some(destructive)) = (attr.read_only, attr.destructive)
        && read_only.value
        && destructive.value
    {
        errors.at(
            destructive.span,
            "a skill cannot be both `read_only` and `destructive`: keep the one that is true",
        );
    }
}

fn has_a_description(attr: &SkillAttr, skill: &SkillFn, errors: &mut Errors) {
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
        errors.at(
            span,
            "a skill needs a description the model can read: add a doc comment (`/// What it does.`) \
             or `#[skill(description = \"...\")]`",
        );
    }
}

/// The skill's name: `name = "..."` or the function's name.
pub fn skill_name(attr: &SkillAttr, skill: &SkillFn) -> String {
    attr.name
        .as_ref()
        .map_or_else(|| unraw(&skill.item.sig.ident), |n| n.value())
}

/// An identifier without its `r#` prefix.
pub fn unraw(ident: &syn::Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

/// What model APIs accept as a tool name: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `"500ms"`, `"30s"`, `"2m"`, `"1h"`: a positive whole number and a unit.
pub fn parse_timeout(text: &str) -> Result<Duration, String> {
    let usage = format!(
        "invalid timeout `{text}`: write a positive whole number and a unit, e.g. \"500ms\", \"30s\", \"2m\" or \"1h\""
    );
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| usage.clone())?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| usage.clone())?;
    let duration = match unit {
        "ms" => Duration::from_millis(number),
        "s" => Duration::from_secs(number),
        "m" => Duration::from_secs(number.saturating_mul(60)),
        "h" => Duration::from_secs(number.saturating_mul(3600)),
        _ => return Err(usage),
    };
    if duration.is_zero() {
        return Err(format!(
            "invalid timeout `{text}`: a timeout of zero would fail every call"
        ));
    }
    Ok(duration)
}
