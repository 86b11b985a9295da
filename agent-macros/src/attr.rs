//! Parsing the arguments of `#[skill(...)]` into a [`SkillAttr`].
//!
//! Parsing is forgiving: a mistake in one key is recorded and parsing goes on, so one build reports
//! every mistake in the attribute at once.

use proc_macro2::{Span, TokenStream};
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, ExprArray, ExprLit, Lit, LitBool, LitStr, Path};

/// Every key the attribute accepts, for "did you mean" suggestions.
pub const KEYS: &[&str] = &[
    "name",
    "description",
    "read_only",
    "destructive",
    "concurrency_safe",
    "defer",
    "aliases",
    "search_hint",
    "timeout",
    "crate",
    "register",
];

/// A boolean key, with where it was written.
#[derive(Clone, Copy)]
pub struct Flag {
    pub value: bool,
    pub span: Span,
}

/// The parsed `#[skill(...)]` arguments. Every key is optional.
#[derive(Default)]
pub struct SkillAttr {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
    pub read_only: Option<Flag>,
    pub destructive: Option<Flag>,
    pub concurrency_safe: Option<Flag>,
    pub defer: Option<Flag>,
    pub register: Option<Flag>,
    pub aliases: Vec<LitStr>,
    pub search_hint: Option<LitStr>,
    pub timeout: Option<LitStr>,
    pub krate: Option<Path>,
}

impl SkillAttr {
    /// Parses the attribute's tokens. Syntax errors that stop parsing and mistakes in single keys
    /// are all returned together.
    pub fn parse(tokens: TokenStream) -> (SkillAttr, Vec<syn::Error>) {
        let mut attr = SkillAttr::default();
        let mut errors = Vec::new();
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
                errors.push(syn::Error::new(
                    key_span,
                    format!("duplicate key `{key}`: give it once"),
                ));
                skip_value(meta.input)?;
                return Ok(());
            }
            seen.push(key.clone());
            let result = match key.as_str() {
                "name" => string(&meta).map(|v| attr.name = Some(v)),
                "description" => string(&meta).map(|v| attr.description = Some(v)),
                "search_hint" => string(&meta).map(|v| attr.search_hint = Some(v)),
                "timeout" => string(&meta).map(|v| attr.timeout = Some(v)),
                "read_only" => flag(&meta).map(|v| attr.read_only = Some(v)),
                "destructive" => flag(&meta).map(|v| attr.destructive = Some(v)),
                "concurrency_safe" => flag(&meta).map(|v| attr.concurrency_safe = Some(v)),
                "defer" => flag(&meta).map(|v| attr.defer = Some(v)),
                "register" => flag(&meta).map(|v| attr.register = Some(v)),
                "aliases" => aliases(&meta).map(|v| attr.aliases = v),
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
                errors.push(error);
                skip_value(meta.input)?;
            }
            Ok(())
        });
        if let Err(error) = parser.parse2(tokens) {
            errors.push(error);
        }
        (attr, errors)
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

fn aliases(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Vec<LitStr>> {
    const USAGE: &str = "`aliases` takes a list of strings: `aliases = [\"grep\", \"rg\"]`";
    if !meta.input.peek(syn::Token![=]) {
        return Err(meta.error(USAGE));
    }
    let expr: Expr = meta.value()?.parse()?;
    let Expr::Array(ExprArray { elems, .. }) = expr else {
        return Err(syn::Error::new_spanned(expr, USAGE));
    };
    let mut out = Vec::new();
    let mut errors: Option<syn::Error> = None;
    for elem in elems {
        match elem {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => out.push(s),
            other => {
                let error = syn::Error::new_spanned(other, USAGE);
                match &mut errors {
                    Some(all) => all.combine(error),
                    None => errors = Some(error),
                }
            }
        }
    }
    match errors {
        Some(error) => Err(error),
        None => Ok(out),
    }
}

/// The candidate closest to `word` by edit distance, if it is close enough to be a typo.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
