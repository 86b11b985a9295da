//! Reading the front matter's YAML into the shapes of its fields, without building a value tree.
//!
//! The front matter is walked with serde visitors instead of being deserialized into a
//! `serde_yaml_ng::Value`: a field of the specification is read as a [`Shape`] (a string, or the
//! kind of thing it is instead), `metadata` one level deeper, and everything else, including
//! every key the specification does not define, is skipped with [`IgnoredAny`]. Skipping never
//! follows an alias, and a [`Shape`] keeps no more than one level of a mapping, so an alias bomb
//! ("billion laughs") costs what its text costs instead of expanding, and deep nesting is skipped
//! with the parser's own loop instead of recursion.

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use std::fmt;

/// What a YAML node is, as far as the checks need to know.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    /// `~`, `null` or nothing at all.
    Null,
    /// A string scalar.
    Str(String),
    /// `true` or `false`.
    Bool(bool),
    /// A number, as Rust prints it.
    Number(String),
    /// A sequence (its elements are skipped).
    Seq,
    /// A mapping: its entries if asked for (one level), else none.
    Map(Vec<(Shape, Shape)>),
    /// A value with a custom tag (`!tag value`).
    Tagged,
}

impl Shape {
    /// "a number (1.0)", "a list", …: what a message says the node is.
    pub(crate) fn describe(&self) -> String {
        match self {
            Shape::Null => "empty (null)".into(),
            Shape::Str(s) => format!("the string {}", crate::rule::quote(s, 40)),
            Shape::Bool(b) => format!("the boolean {b}"),
            Shape::Number(n) => format!("the number {n}"),
            Shape::Seq => "a list".into(),
            Shape::Map(_) => "a mapping".into(),
            Shape::Tagged => "a value with a YAML tag".into(),
        }
    }
}

/// The top-level keys of the front matter, in file order: every string key (so that duplicates
/// can be found), with the shape of its value for the keys of the specification.
#[derive(Debug, Default)]
pub(crate) struct Fields {
    /// `(key, shape)`; the shape is `None` for keys the specification does not define.
    pub entries: Vec<(String, Option<Shape>)>,
}

/// What the front matter is when it is not a mapping.
pub(crate) enum Top {
    /// A mapping (or an empty front matter, read as an empty mapping).
    Mapping(Fields),
    /// Something else: the shape says what.
    Other(Shape),
}

/// The keys whose values are read; every other key is skipped.
const KNOWN: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// Reads the front matter. `Err` is the parser's error (syntax, or a limit of the parser).
pub(crate) fn read(yaml: &str) -> Result<Top, serde_yaml_ng::Error> {
    TopSeed.deserialize(serde_yaml_ng::Deserializer::from_str(yaml))
}

struct TopSeed;

impl<'de> DeserializeSeed<'de> for TopSeed {
    type Value = Top;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Top, D::Error> {
        d.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Top, E> {
        Ok(Top::Mapping(Fields::default()))
    }
    fn visit_none<E: de::Error>(self) -> Result<Top, E> {
        Ok(Top::Mapping(Fields::default()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut fields = Fields::default();
        while let Some(key) = map.next_key_seed(ShapeSeed { entries: false })? {
            match key {
                Shape::Str(key) if KNOWN.contains(&key.as_str()) => {
                    let entries = key == "metadata";
                    let value = map.next_value_seed(ShapeSeed { entries })?;
                    fields.entries.push((key, Some(value)));
                }
                Shape::Str(key) => {
                    map.next_value::<IgnoredAny>()?;
                    fields.entries.push((key, None));
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Top::Mapping(fields))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Top, A::Error> {
        ShapeVisitor { entries: false }
            .visit_seq(seq)
            .map(Top::Other)
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Top, A::Error> {
        ShapeVisitor { entries: false }
            .visit_enum(data)
            .map(Top::Other)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Top, E> {
        Ok(Top::Other(Shape::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Top, E> {
        Ok(Top::Other(Shape::Number(v.to_string())))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Top, E> {
        Ok(Top::Other(Shape::Number(v.to_string())))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Top, E> {
        Ok(Top::Other(Shape::Number(format!("{v:?}"))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Top, E> {
        Ok(Top::Other(Shape::Str(v.to_owned())))
    }
}

/// Reads one node as a [`Shape`]; `entries`: keep a mapping's entries (one level).
#[derive(Clone, Copy)]
struct ShapeSeed {
    entries: bool,
}

impl<'de> DeserializeSeed<'de> for ShapeSeed {
    type Value = Shape;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Shape, D::Error> {
        d.deserialize_any(ShapeVisitor {
            entries: self.entries,
        })
    }
}

struct ShapeVisitor {
    entries: bool,
}

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Shape, E> {
        Ok(Shape::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Shape, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Shape, E> {
        Ok(Shape::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Shape, E> {
        Ok(Shape::Number(v.to_string()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Shape, E> {
        Ok(Shape::Number(v.to_string()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Shape, E> {
        Ok(Shape::Number(v.to_string()))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Shape, E> {
        Ok(Shape::Number(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Shape, E> {
        Ok(Shape::Number(format!("{v:?}")))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Shape, E> {
        Ok(Shape::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Shape, E> {
        Ok(Shape::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Shape, A::Error> {
        IgnoredAny.visit_seq(seq)?;
        Ok(Shape::Seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        if !self.entries {
            IgnoredAny.visit_map(map)?;
            return Ok(Shape::Map(Vec::new()));
        }
        let mut entries = Vec::new();
        let inner = ShapeSeed { entries: false };
        while let Some(key) = map.next_key_seed(inner)? {
            let value = map.next_value_seed(inner)?;
            entries.push((key, value));
        }
        Ok(Shape::Map(entries))
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Shape, A::Error> {
        IgnoredAny.visit_enum(data)?;
        Ok(Shape::Tagged)
    }
}
