//! Parsing the arguments of `#[skill(...)]` into a [`SkillAttr`].
//!
//! Parsing is forgiving: a mistake in one key is reported to the [`Ctxt`] and parsing goes on, so
//! one build reports every mistake in the attribute at once. Values are parsed once, here, into
//! what the expansion needs (`timeout` into a [`Duration`]).

use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, ExprArray, ExprLit, Ident, Lit, LitBool, LitStr, Path};

use crate::ctxt::Ctxt;
use crate::names::closest;

/// Every key the attribute accepts, for "did you mean" suggestions.
pub const KEYS: &[&str] = &[
    "name",
    "description",
    "read_only",
    "destructive",
    "idempotent",
    "concurrency_safe",
    "defer",
    "aliases",
    "search_hint",
    "timeout",
    "crate",
    "register",
    "struct_name",
];

/// A boolean key, with where it was written.
#[derive(Clone, Copy)]
pub struct Flag {
    /// `key` and `key = true` are true, `key = false` is false.
    pub value: bool,
    /// The key's name, for errors.
    pub span: Span,
}

/// `timeout = "30s"`, parsed once.
pub struct Timeout {
    /// The string as written, for errors.
    pub lit: LitStr,
    /// The time limit, or the sentence that says why the string is not one. `validate` reports
    /// the sentence among its rules, so a build lists mistakes in the order it always has.
    pub duration: Result<Duration, String>,
}

/// The parsed `#[skill(...)]` arguments. Every key is optional.
#[derive(Default)]
pub struct SkillAttr {
    /// `name = "..."`: the skill's name, if not the function's.
    pub name: Option<LitStr>,
    /// `description = "..."`: the description, if not the doc comment.
    pub description: Option<LitStr>,
    /// `read_only`: the skill changes nothing.
    pub read_only: Option<Flag>,
    /// `destructive`: the skill may destroy data.
    pub destructive: Option<Flag>,
    /// `idempotent`: running a call again has no further effect (default: `read_only`).
    pub idempotent: Option<Flag>,
    /// `concurrency_safe`: the skill may run beside others (default: `read_only`).
    pub concurrency_safe: Option<Flag>,
    /// `defer`: the skill is left out of the definitions until a session loads it.
    pub defer: Option<Flag>,
    /// `register = false`: no `inventory` registration.
    pub register: Option<Flag>,
    /// `aliases = [...]`: other names the skill answers to.
    pub aliases: Vec<LitStr>,
    /// `search_hint = "..."`: words `tool_search` matches.
    pub search_hint: Option<LitStr>,
    /// `timeout = "..."`: the skill's time limit.
    pub timeout: Option<Timeout>,
    /// `crate = path`: where the runtime crate is, if not found by name.
    pub krate: Option<Path>,
    /// `struct_name = Ident`: the generated unit struct's name, if not `{Function}Skill`.
    pub struct_name: Option<Ident>,
}

impl SkillAttr {
    /// Parses the attribute's tokens, reporting syntax errors that stop parsing and mistakes in
    /// single keys to `cx`.
    pub fn parse(cx: &Ctxt, tokens: TokenStream) -> SkillAttr {
        let mut attr = SkillAttr::default();
        let mut seen: Vec<String> = Vec::new();
        let parser = syn::meta::parser(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_else(|| {
                    meta.path
                        .segments
                        .iter()
                        .map(|s| s.ident.to_string())
                        .collect::<Vec<_>>()
                        .join("::")
                });
            let key_span = meta.path.span();
            if seen.contains(&key) && KEYS.contains(&key.as_str()) {
                cx.error_at(key_span, format!("duplicate key `{key}`: give it once"));
                skip_value(meta.input)?;
                return Ok(());
            }
            seen.push(key.clone());
            let result = match key.as_str() {
                "name" => string(&meta).map(|v| attr.name = Some(v)),
                "description" => string(&meta).map(|v| attr.description = Some(v)),
                "search_hint" => string(&meta).map(|v| attr.search_hint = Some(v)),
                "timeout" => string(&meta).map(|v| attr.timeout = Some(timeout(v))),
                "read_only" => flag(&meta).map(|v| attr.read_only = Some(v)),
                "destructive" => flag(&meta).map(|v| attr.destructive = Some(v)),
                "idempotent" => flag(&meta).map(|v| attr.idempotent = Some(v)),
                "concurrency_safe" => flag(&meta).map(|v| attr.concurrency_safe = Some(v)),
                "defer" => flag(&meta).map(|v| attr.defer = Some(v)),
                "register" => flag(&meta).map(|v| attr.register = Some(v)),
                "aliases" => aliases(cx, &meta).map(|v| attr.aliases = v),
                "struct_name" => identifier(&meta).map(|v| attr.struct_name = Some(v)),
                "crate" => meta
                    .value()
                    .and_then(|v| v.parse::<Path>())
                    .map(|v| attr.krate = Some(v)),
                _ => {
                    let hint = closest(&key, KEYS)
                        .map(|k| format!("; did you mean `{k}`?"))
                        .unwrap_or_else(|| format!("; expected one of: {}", KEYS.join(", ")));
                    skip_value(meta.input)?;
                    Err(syn::Error::new(
                        key_span,
                        format!("unknown key `{key}` in #[skill]{hint}"),
                    ))
                }
            };
            if let Err(error) = result {
                cx.syn_error(error);
                skip_value(meta.input)?;
            }
            Ok(())
        });
        if let Err(error) = parser.parse2(tokens) {
            cx.syn_error(error);
        }
        attr
    }
}

/// Skips what is left of a key's value (`= expr` or `(...)`), so parsing can go on after an error.
fn skip_value(input: ParseStream) -> syn::Result<()> {
    if input.peek(syn::Token![=]) {
        input.parse::<syn::Token![=]>()?;
        input.parse::<Expr>()?;
    } else if input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

/// The value of `key = "..."`.
fn string(meta: &syn::meta::ParseNestedMeta) -> syn::Result<LitStr> {
    let key = meta
        .path
        .get_ident()
        .map(|i| i.to_string())
        .unwrap_or_default();
    if !meta.input.peek(syn::Token![=]) {
        return Err(meta.error(format!("`{key}` takes a string: `{key} = \"...\"`")));
    }
    let expr: Expr = meta.value()?.parse()?;
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` takes a string literal: `{key} = \"...\"`"),
        )),
    }
}

/// The value of `key` (true) or `key = bool`.
fn flag(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Flag> {
    let span = meta.path.span();
    if meta.input.peek(syn::Token![=]) {
        let key = meta
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        let expr: Expr = meta.value()?.parse()?;
        match expr {
            Expr::Lit(ExprLit {
                lit: Lit::Bool(LitBool { value, .. }),
                ..
            }) => Ok(Flag { value, span }),
            other => Err(syn::Error::new_spanned(
                other,
                format!("`{key}` is a flag: write `{key}` or `{key} = false`"),
            )),
        }
    } else {
        Ok(Flag { value: true, span })
    }
}

/// The value of `aliases = ["...", ...]`. Each element that is not a string is reported; then no
/// alias is kept, so the rules on aliases judge only a list written right.
fn aliases(cx: &Ctxt, meta: &syn::meta::ParseNestedMeta) -> syn::Result<Vec<LitStr>> {
    const USAGE: &str = "`aliases` takes a list of strings: `aliases = [\"grep\", \"rg\"]`";
    if !meta.input.peek(syn::Token![=]) {
        return Err(meta.error(USAGE));
    }
    let expr: Expr = meta.value()?.parse()?;
    let Expr::Array(ExprArray { elems, .. }) = expr else {
        return Err(syn::Error::new_spanned(expr, USAGE));
    };
    let mut strings = Vec::new();
    let mut all_strings = true;
    for elem in elems {
        match elem {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => strings.push(s),
            other => {
                cx.error_spanned_by(other, USAGE);
                all_strings = false;
            }
        }
    }
    if !all_strings {
        strings.clear();
    }
    Ok(strings)
}

/// The value of `struct_name = Ident`: one identifier, not a keyword, a string or a path. The
/// whole value up to the next `,` is read, so the error covers all of a wrong one.
fn identifier(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Ident> {
    const USAGE: &str =
        "`struct_name` takes the name of a struct, an identifier: `struct_name = Forecaster`";
    if !meta.input.peek(syn::Token![=]) {
        return Err(meta.error(USAGE));
    }
    let eq: syn::Token![=] = meta.input.parse()?;
    let mut value = TokenStream::new();
    while !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
        value.extend([meta.input.parse::<proc_macro2::TokenTree>()?]);
    }
    let mut tokens = value.clone().into_iter();
    let single = match (tokens.next(), tokens.next()) {
        (Some(first), None) => Some(first),
        _ => None,
    };
    match single {
        None if value.is_empty() => Err(syn::Error::new(eq.span, USAGE)),
        Some(proc_macro2::TokenTree::Ident(ident)) => syn::parse2::<Ident>(ident.to_token_stream())
            .map_err(|_| {
                syn::Error::new(
                    ident.span(),
                    format!("`{ident}` is reserved and cannot name a struct: {USAGE}"),
                )
            }),
        Some(proc_macro2::TokenTree::Literal(lit)) if lit.to_string().starts_with('"') => {
            Err(syn::Error::new(
                lit.span(),
                "`struct_name` takes an identifier, not a string: write it without the quotes",
            ))
        }
        _ => Err(syn::Error::new_spanned(value, USAGE)),
    }
}

/// `timeout = "..."`, parsed into its [`Duration`] (or why it is not one).
fn timeout(lit: LitStr) -> Timeout {
    let duration = parse_duration(&lit.value());
    Timeout { lit, duration }
}

/// `"500ms"`, `"30s"`, `"2m"`, `"1h"`: a positive whole number and a unit.
fn parse_duration(text: &str) -> Result<Duration, String> {
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
