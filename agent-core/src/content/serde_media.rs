//! How [`Media`] and [`Part`] are written in a run's state, a session and a journal: JSON with
//! the bytes in standard base64 (`data`) or a `url`, and the media type and name beside them.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Media, MediaSource, Part};
use crate::call::SharedStr;

#[derive(Serialize)]
struct MediaOut<'a> {
    media_type: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MediaIn {
    media_type: SharedStr,
    #[serde(default)]
    data: Option<String>,
    #[serde(default)]
    url: Option<SharedStr>,
    #[serde(default)]
    name: Option<SharedStr>,
}

impl Serialize for Media {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        MediaOut {
            media_type: &self.media_type,
            data: self.bytes().map(|bytes| STANDARD.encode(bytes)),
            url: self.url_str(),
            name: self.name.as_deref(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Media {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = MediaIn::deserialize(deserializer)?;
        let source = match (raw.data, raw.url) {
            (Some(data), None) => MediaSource::Bytes(
                STANDARD
                    .decode(data)
                    .map_err(|e| D::Error::custom(format!("media `data` is not base64: {e}")))?
                    .into(),
            ),
            (None, Some(url)) => MediaSource::Url(url),
            _ => {
                return Err(D::Error::custom(
                    "media needs exactly one of `data` and `url`",
                ));
            }
        };
        Ok(Media {
            media_type: raw.media_type,
            source,
            name: raw.name,
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum PartRepr {
    Text { text: String },
    Media(Media),
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        enum PartRef<'a> {
            Text { text: &'a str },
            Media(&'a Media),
        }
        match self {
            Part::Text(text) => PartRef::Text { text },
            Part::Media(media) => PartRef::Media(media),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match PartRepr::deserialize(deserializer)? {
            PartRepr::Text { text } => Part::Text(text),
            PartRepr::Media(media) => Part::Media(media),
        })
    }
}
