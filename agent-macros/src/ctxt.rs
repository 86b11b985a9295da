//! The one error collector every stage reports to, as serde_derive's `Ctxt`: parsing the
//! attribute, building the model and validating it all push here and go on, so one build shows
//! every mistake; [`Ctxt::check`] then combines them into one `syn::Error`, in the order they were
//! found.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::Span;
use quote::ToTokens;

/// Errors found so far. Shared by reference (`&Ctxt`), so a parser closure can report while the
/// model it fills is borrowed mutably. Must be consumed by [`Ctxt::check`].
pub struct Ctxt {
    /// `None` once checked.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    /// An empty collector.
    pub fn new() -> Ctxt {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error built elsewhere (a syn parse error, say).
    pub fn syn_error(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(error);
    }

    /// Records `message` at one span.
    pub fn error_at(&self, span: Span, message: impl Display) {
        self.syn_error(syn::Error::new(span, message));
    }

    /// Records `message` spanning all of `tokens`, from their first token to their last.
    pub fn error_spanned_by(&self, tokens: impl ToTokens, message: impl Display) {
        self.syn_error(syn::Error::new_spanned(tokens, message));
    }

    /// Consumes the collector: `Ok` if nothing was reported, else every error combined into one.
    pub fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    /// Catches a stage that forgot to call [`Ctxt::check`], which would drop errors silently.
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("Ctxt dropped without check()");
        }
    }
}
