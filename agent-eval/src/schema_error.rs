//! [`SchemaError`]: a JSON Schema that does not compile, or a value that does not follow one.

use std::fmt;

/// Why [`Schema`](crate::Schema) refused a schema or a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The schema is not a valid JSON Schema ([`Schema::new`](crate::Schema::new),
    /// [`Check::json_schema`](crate::Check::json_schema),
    /// [`Case::output_schema`](crate::Case::output_schema)).
    #[error("not a valid JSON Schema: {reason}{}", At(at.as_deref()))]
    Invalid {
        /// What is wrong, in the validator's words.
        reason: String,
        /// Where in the schema, as a JSON Pointer, when the validator said.
        at: Option<String>,
    },
    /// The value does not follow the schema ([`Schema::check`](crate::Schema::check)).
    #[error("{}", Errors(errors, *more))]
    Mismatch {
        /// The first errors (at most five), each as `` `PLACE`: what is wrong `` (`(root)` for
        /// the value itself).
        errors: Vec<String>,
        /// How many more errors there were.
        more: usize,
    },
}

/// ` (at PLACE)`, or nothing.
struct At<'a>(Option<&'a str>);

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(at) => write!(f, " (at {at})"),
            None => Ok(()),
        }
    }
}

/// The errors joined with `; `, then `and N more`.
struct Errors<'a>(&'a [String], usize);

impl fmt::Display for Errors<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("; "))?;
        if self.1 > 0 {
            write!(f, "; and {} more", self.1)?;
        }
        Ok(())
    }
}
