//! The typed model of a `#[skill]` function: its attribute, its parameters, its doc comment split
//! into the description and the `# Arguments` entries, and its return type. Built from syn's tree
//! without judging it (only what cannot be read at all is reported); `validate` judges.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, ExprLit, FnArg, Ident, ItemFn, Lit, LitStr, Meta, Pat, ReturnType, Type,
};

use crate::attr::SkillAttr;
use crate::ctxt::Ctxt;
use crate::names::{struct_name, unraw};

/// One line of the doc comment, with the span of the `///` it came from.
pub struct DocLine {
    /// The line, one leading space removed.
    pub text: String,
    /// The doc attribute it came from.
    pub span: Span,
}

/// An entry of the `# Arguments` section: `* \`name\` - text`.
pub struct ArgDoc {
    /// The parameter it describes.
    pub name: String,
    /// The description, continuation lines included.
    pub text: String,
    /// The entry's first line, for errors.
    pub span: Span,
}

/// Options from `#[arg(...)]` on a parameter.
#[derive(Default)]
pub struct ArgOptions {
    /// `#[arg(default)]` (`Some(None)`) or `#[arg(default = expr)]` (`Some(Some(expr))`).
    pub default: Option<Option<Expr>>,
    /// `#[arg(rename = "...")]`: the field's name in the schema.
    pub rename: Option<LitStr>,
    /// `#[arg(undocumented)]`: the parameter's name says it all; no `# Arguments` entry needed.
    pub undocumented: Option<Span>,
}

/// What a parameter is.
pub enum ParamKind {
    /// `&SkillContext`: passed through, not part of the schema.
    Context,
    /// A field of the input struct.
    Input,
}

/// One parameter of the function.
pub struct Param<'a> {
    /// Context or input.
    pub kind: ParamKind,
    /// The name, when the pattern is a plain identifier.
    pub ident: Option<Ident>,
    /// The pattern as written.
    pub pat: &'a Pat,
    /// The type as written.
    pub ty: &'a Type,
    /// Its `#[arg(...)]` options.
    pub options: ArgOptions,
}

/// The function under `#[skill]`, as the rest of the macro sees it.
pub struct SkillFn<'a> {
    /// The `#[skill(...)]` arguments.
    pub attr: SkillAttr,
    /// The function as written.
    pub item: &'a ItemFn,
    /// Its parameters, in order.
    pub params: Vec<Param<'a>>,
    /// Receivers (`self`), which a skill cannot have.
    pub receivers: Vec<Span>,
    /// The doc comment without its `# Arguments` section.
    pub description: String,
    /// The `# Arguments` entries.
    pub args_doc: Vec<ArgDoc>,
    /// The `T` of `Result<T, E>` (or `Result<T>`), when the return type has that shape.
    pub output: Option<&'a Type>,
}

impl<'a> SkillFn<'a> {
    /// Reads the attribute's tokens and the function into the model, reporting to `cx` what
    /// cannot be read (a malformed key or `#[arg]`).
    pub fn from_syn(cx: &Ctxt, attr: TokenStream, item: &'a ItemFn) -> SkillFn<'a> {
        let attr = SkillAttr::parse(cx, attr);
        let mut params = Vec::new();
        let mut receivers = Vec::new();
        for input in &item.sig.inputs {
            match input {
                FnArg::Receiver(receiver) => receivers.push(receiver.span()),
                FnArg::Typed(typed) => {
                    let kind = if is_context(&typed.ty) {
                        ParamKind::Context
                    } else {
                        ParamKind::Input
                    };
                    let ident = match &*typed.pat {
                        Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => {
                            Some(p.ident.clone())
                        }
                        _ => None,
                    };
                    let options = parse_arg_options(cx, &typed.attrs);
                    params.push(Param {
                        kind,
                        ident,
                        pat: &typed.pat,
                        ty: &typed.ty,
                        options,
                    });
                }
            }
        }
        let docs = doc_lines(&item.attrs);
        let (description, args_doc) = split_docs(&docs);
        SkillFn {
            attr,
            item,
            params,
            receivers,
            description,
            args_doc,
            output: result_ok_type(&item.sig.output),
        }
    }

    /// The skill's name: `name = "..."` or the function's name.
    pub fn name(&self) -> String {
        self.attr
            .name
            .as_ref()
            .map_or_else(|| unraw(&self.item.sig.ident), LitStr::value)
    }

    /// The generated unit struct's name: `struct_name = ...`, or the function's name in
    /// UpperCamelCase with a `Skill` suffix, spanned at the function's name, where an error about
    /// the struct belongs.
    pub fn struct_ident(&self) -> Ident {
        self.attr.struct_name.clone().unwrap_or_else(|| {
            let function = &self.item.sig.ident;
            Ident::new(&struct_name(&unraw(function)), function.span())
        })
    }

    /// Every identifier the user wrote in the function and in `crate = path`, without `r#`: the
    /// names the expansion's own items must not take, since it puts the user's tokens (types,
    /// default expressions, the function's name) among them.
    pub fn user_names(&self) -> HashSet<String> {
        let mut names = HashSet::new();
        collect_idents(self.item.to_token_stream(), &mut names);
        if let Some(krate) = &self.attr.krate {
            collect_idents(krate.to_token_stream(), &mut names);
        }
        names
    }

    /// The parameters that become fields of the input struct.
    pub fn inputs(&self) -> impl Iterator<Item = &Param<'a>> {
        self.params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Input))
    }

    /// The text of the `# Arguments` entry for `name`.
    pub fn arg_doc(&self, name: &str) -> Option<&str> {
        self.args_doc
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.text.as_str())
    }
}

/// Adds every identifier in `tokens`, groups included, to `names`.
fn collect_idents(tokens: TokenStream, names: &mut HashSet<String>) {
    for token in tokens {
        match token {
            TokenTree::Ident(ident) => {
                names.insert(unraw(&ident));
            }
            TokenTree::Group(group) => collect_idents(group.stream(), names),
            TokenTree::Punct(_) | TokenTree::Literal(_) => {}
        }
    }
}

/// Whether `ty` is the context: `&SkillContext` (any path ending in `SkillContext`, shared or
/// `mut`), or `SkillContext` by value, which `validate` refuses with a sentence of its own rather
/// than as a parameter the model would fill in.
pub fn is_context(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => is_context_path(&r.elem),
        other => is_context_path(other),
    }
}

/// Whether `ty` is a path ending in `SkillContext`.
pub fn is_context_path(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "SkillContext"))
}

/// `T` from a return type `Result<T, E>`/`Result<T>` under any path (`anyhow::Result<T>`).
fn result_ok_type(output: &ReturnType) -> Option<&Type> {
    let ReturnType::Type(_, ty) = output else {
        return None;
    };
    let Type::Path(path) = &**ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(ok) => Some(ok),
        _ => None,
    }
}

/// The options of every `#[arg(...)]` on a parameter.
fn parse_arg_options(cx: &Ctxt, attrs: &[Attribute]) -> ArgOptions {
    let mut options = ArgOptions::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("arg")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("default") {
                options.default =
                    Some(if meta.input.peek(syn::Token![=]) { Some(meta.value()?.parse()?) } else { None });
                Ok(())
            } else if meta.path.is_ident("rename") {
                let value: LitStr = meta.value()?.parse()?;
                options.rename = Some(value);
                Ok(())
            } else if meta.path.is_ident("undocumented") {
                options.undocumented = Some(meta.path.span());
                Ok(())
            } else {
                Err(meta.error("unknown option in #[arg]; expected `default`, `default = expr`, `rename = \"...\"` or `undocumented`"))
            }
        });
        if let Err(error) = result {
            cx.syn_error(error);
        }
    }
    options
}

/// The lines of the doc comment (`///` and `#[doc = "..."]`), one leading space removed.
fn doc_lines(attrs: &[Attribute]) -> Vec<DocLine> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
        {
            for line in s.value().split('\n') {
                let line = line.trim_end_matches('\r');
                let text = line.strip_prefix(' ').unwrap_or(line).to_owned();
                lines.push(DocLine {
                    text,
                    span: attr.span(),
                });
            }
        }
    }
    lines
}

/// Splits doc lines into the description (everything but the `# Arguments` section) and the
/// section's entries. Inside a code fence nothing is a heading or an entry; an entry's nested
/// list items (indented deeper than the entries) and code blocks stay in its text, on lines of
/// their own, while wrapped prose is joined with spaces.
fn split_docs(lines: &[DocLine]) -> (String, Vec<ArgDoc>) {
    let mut description = Vec::new();
    let mut args: Vec<ArgDoc> = Vec::new();
    let mut in_args = false;
    let mut in_fence = false;
    // The indentation of the section's first entry: deeper list items belong to an entry.
    let mut entry_indent: Option<usize> = None;
    for line in lines {
        let trimmed = line.text.trim();
        let fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
        let in_code = in_fence || fence;
        if fence {
            in_fence = !in_fence;
        }
        if !in_code && trimmed.starts_with('#') {
            let heading = trimmed.trim_start_matches('#').trim();
            in_args = ["arguments", "args", "parameters", "params"]
                .iter()
                .any(|name| heading.eq_ignore_ascii_case(name));
            entry_indent = None;
            if in_args {
                continue;
            }
        }
        if !in_args {
            description.push(line.text.as_str());
            continue;
        }
        let indent = line.text.len() - line.text.trim_start().len();
        let entry = if in_code || entry_indent.is_some_and(|first| indent > first) {
            None
        } else {
            parse_arg_entry(trimmed)
        };
        if let Some((name, text)) = entry {
            entry_indent.get_or_insert(indent);
            args.push(ArgDoc {
                name,
                text,
                span: line.span,
            });
        } else if let Some(last) = args.last_mut()
            && !trimmed.is_empty()
        {
            let own_line = in_code || trimmed.starts_with(['*', '-', '+']);
            last.text.push(if own_line { '\n' } else { ' ' });
            last.text.push_str(trimmed);
        }
    }
    let description = description.join("\n").trim().to_owned();
    (description, args)
}

/// `* \`name\` - text`, `- \`name\`: text` and mixes of the two.
fn parse_arg_entry(line: &str) -> Option<(String, String)> {
    let rest = line
        .strip_prefix('*')
        .or_else(|| line.strip_prefix('-'))?
        .trim_start();
    let rest = rest.strip_prefix('`')?;
    let end = rest.find('`')?;
    let name = rest[..end].trim().to_owned();
    let text = rest[end + 1..].trim_start();
    let text = text
        .strip_prefix('-')
        .or_else(|| text.strip_prefix(':'))
        .unwrap_or(text)
        .trim();
    Some((name, text.to_owned()))
}
