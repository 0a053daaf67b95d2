//! The shapes of what this browser keeps (`store.rs`'s items): plain serialisable copies of the
//! values the page saves, so that the JSON already in people's browsers is defined here, not by
//! the serde derives of core's types. A field renamed in core changes a `From` conversion here
//! (a compile error), never what a saved item says.
//!
//! Every item written carries its format's version, `"v"` ([`VERSION`]); one without is from an
//! earlier build, read as today's (the optional fields of earlier shapes are read where the
//! copies are). An item written by a newer build, with a higher version, is refused with a
//! message rather than misread.
//!
//! - `scores.rs`: what a run measures (metrics, task scores, curve points, evaluations);
//! - `run.rs`: a finished fine-tuning run (record, summary, mistakes);
//! - `train.rs`: a run's request and hyper-parameters, a checkpoint of a run in progress;
//! - `lab.rs`: the MLM lab's settings and saved models.

mod choice;
mod labels;
pub mod lab;
pub mod run;
pub mod scores;
pub mod train;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The format of the items this build writes. Raise it when a saved shape changes in a way an
/// older build would misread, and keep reading the earlier ones.
pub const VERSION: u64 = 1;

/// A saved item's value with its format's version: written as the value's fields and `"v"`,
/// read from today's or an earlier (unversioned) item, refused from a newer one.
#[derive(Debug, Clone, PartialEq)]
pub struct Versioned<T>(pub T);

impl<T: Serialize> Serialize for Versioned<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Item<'a, T> {
            v: u64,
            #[serde(flatten)]
            value: &'a T,
        }
        Item { v: VERSION, value: &self.0 }.serialize(serializer)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Versioned<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut value = serde_json::Value::deserialize(deserializer)?;
        let version = match value.as_object_mut().and_then(|fields| fields.remove("v")) {
            None => 0,
            Some(v) => v.as_u64().ok_or_else(|| D::Error::custom(format!("its format version is not a number ({v})")))?,
        };
        check(version).map_err(D::Error::custom)?;
        serde_json::from_value(value).map(Versioned).map_err(D::Error::custom)
    }
}

/// Whether this build reads format `version` (0: an earlier build's, unversioned).
pub fn check(version: u64) -> Result<(), String> {
    if version > VERSION {
        return Err(format!("it was saved by a newer version of this page (saved format v{version}; this one reads up to v{VERSION}): reload the page to get the newer version"));
    }
    Ok(())
}

/// `items` converted one by one (the copies' lists to core's, and back).
pub fn list<A: Into<B>, B>(items: Vec<A>) -> Vec<B> {
    items.into_iter().map(Into::into).collect()
}

/// Declares a saved copy of a core enum of unit variants (written as the variant's name, as
/// serde writes it), with conversions both ways.
macro_rules! unit_enum {
    ($(#[$doc:meta])* $name:ident = $core:path { $($variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($variant),+
        }

        impl From<$core> for $name {
            fn from(c: $core) -> Self {
                use $core as C;
                match c {
                    $(C::$variant => Self::$variant),+
                }
            }
        }

        impl From<$name> for $core {
            fn from(s: $name) -> Self {
                use $core as C;
                match s {
                    $($name::$variant => C::$variant),+
                }
            }
        }
    };
}

pub(crate) use unit_enum;

/// Declares a plain serialisable copy of one of core's plain data structs (same fields, each
/// converted with `Into`), with conversions both ways: a saved item's, or a worker message's
/// (`protocol/answers.rs`).
macro_rules! plain_struct {
    ($(#[$doc:meta])* $name:ident = $core:path { $($field:ident: $ty:ty),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        pub struct $name {
            $(pub $field: $ty),+
        }

        impl From<$core> for $name {
            fn from(c: $core) -> Self {
                Self { $($field: c.$field.into()),+ }
            }
        }

        impl From<$name> for $core {
            fn from(s: $name) -> Self {
                Self { $($field: s.$field.into()),+ }
            }
        }
    };
}

pub(crate) use plain_struct;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Note {
        text: String,
    }

    /// Today's items say their version; an earlier build's, without one, read as today's.
    #[test]
    fn an_item_is_written_with_its_version_and_read_with_or_without_one() {
        let json = serde_json::to_string(&Versioned(Note { text: "hi".into() })).unwrap();
        assert_eq!(json, format!(r#"{{"v":{VERSION},"text":"hi"}}"#));
        let back: Versioned<Note> = serde_json::from_str(&json).unwrap();
        assert_eq!(back.0.text, "hi");
        let earlier: Versioned<Note> = serde_json::from_str(r#"{"text":"old"}"#).unwrap();
        assert_eq!(earlier.0.text, "old");
    }

    /// An item from a newer build is refused with a message saying so, even where its fields
    /// would happen to read as today's.
    #[test]
    fn an_item_of_a_higher_version_is_refused_with_a_clear_message() {
        let newer = format!(r#"{{"v":{},"text":"hi"}}"#, VERSION + 1);
        let e = serde_json::from_str::<Versioned<Note>>(&newer).unwrap_err().to_string();
        assert!(e.contains(&format!("saved format v{}", VERSION + 1)) && e.contains("newer version of this page"), "{e}");
        let e = serde_json::from_str::<Versioned<Note>>(r#"{"v":"one","text":"hi"}"#).unwrap_err().to_string();
        assert!(e.contains("not a number"), "{e}");
    }
}
