//! [`SharedStr`]: the string type of call ids and called names.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An immutable, shared string for call ids and skill names as called. A call's id is copied into
/// its [`SkillContext`](crate::SkillContext) and its [`ToolResult`](crate::ToolResult), and the
/// name into the result: copying a `SharedStr` costs a reference count, not an allocation.
///
/// It reads as a `&str` (it derefs to one), compares with string types, and serializes as a
/// plain string.
///
/// ```
/// use agent_core::SharedStr;
///
/// let id = SharedStr::from("toolu_01A09q90qw90lq917835lq9");
/// assert_eq!(id, "toolu_01A09q90qw90lq917835lq9");
/// assert!(id.starts_with("toolu_"));
/// assert_eq!(serde_json::to_string(&id).unwrap(), r#""toolu_01A09q90qw90lq917835lq9""#);
/// ```
#[derive(Clone)]
pub struct SharedStr(Arc<str>);

impl SharedStr {
    /// The string as a slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl Default for SharedStr {
    fn default() -> Self {
        SharedStr::from("")
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> Self {
        SharedStr(Arc::from(s))
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> Self {
        SharedStr(Arc::from(s))
    }
}

impl From<&String> for SharedStr {
    fn from(s: &String) -> Self {
        SharedStr::from(s.as_str())
    }
}

impl From<Arc<str>> for SharedStr {
    fn from(s: Arc<str>) -> Self {
        SharedStr(s)
    }
}

impl From<SharedStr> for Arc<str> {
    fn from(s: SharedStr) -> Self {
        s.0
    }
}

impl From<SharedStr> for String {
    fn from(s: SharedStr) -> Self {
        s.as_str().to_owned()
    }
}

impl PartialEq for SharedStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SharedStr {}

impl PartialOrd for SharedStr {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SharedStr {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for SharedStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

/// Comparisons with the string types, both ways round.
macro_rules! eq_with {
    ($($other:ty),*) => {$(
        impl PartialEq<$other> for SharedStr {
            fn eq(&self, other: &$other) -> bool {
                self.as_str() == AsRef::<str>::as_ref(other)
            }
        }
        impl PartialEq<SharedStr> for $other {
            fn eq(&self, other: &SharedStr) -> bool {
                AsRef::<str>::as_ref(self) == other.as_str()
            }
        }
    )*};
}

eq_with!(str, &str, String);

impl Serialize for SharedStr {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SharedStr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(SharedStrVisitor)
    }
}

/// Reads a string straight into its `Arc`: one allocation, with no `String` in between when the
/// deserializer can lend the text.
struct SharedStrVisitor;

impl serde::de::Visitor<'_> for SharedStrVisitor {
    type Value = SharedStr;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<SharedStr, E> {
        Ok(SharedStr::from(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_read_back_compare_by_content_and_round_trip_through_json() {
        for s in ["", "call_1", "héllo wörld ✓"] {
            let shared = SharedStr::from(s);
            assert_eq!(shared.as_str(), s);
            assert_eq!(shared, s);
            assert_eq!(s, shared);
            assert_eq!(shared.clone(), SharedStr::from(s.to_owned()));
            let json = serde_json::to_string(&shared).unwrap();
            assert_eq!(serde_json::from_str::<SharedStr>(&json).unwrap(), shared);
        }
        let (a, b) = (SharedStr::from("a"), SharedStr::from("b"));
        assert!(a < b);
        let id: SharedStr = serde_json::from_str(r#""call_\u00e9""#).unwrap();
        assert_eq!(id, "call_é");
        let from_value: SharedStr = serde_json::from_value(serde_json::json!("toolu_1")).unwrap();
        assert_eq!(from_value, "toolu_1");
        let not_a_string = serde_json::from_str::<SharedStr>("42").unwrap_err();
        assert!(
            not_a_string.to_string().contains("a string"),
            "{not_a_string}"
        );
    }
}
