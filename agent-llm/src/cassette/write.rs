//! Writing a cassette: the YAML text of its interactions in vcrpy's layout (keys in vcrpy's
//! order, JSON bodies as pydantic-ai's `parsed_body` so a review shows them field by field), and
//! the file written whole or not at all.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::error::CassetteError;
use super::format::{Body, Interaction};

/// The YAML text of a cassette of `interactions`.
pub(crate) fn to_yaml(interactions: &[Interaction]) -> Result<String, String> {
    let interactions: Vec<Value> = interactions
        .iter()
        .map(|i| {
            let mut request = Map::new();
            body_fields(&mut request, &i.request.body, false);
            request.insert("headers".into(), headers(&i.request.headers));
            request.insert("method".into(), json!(i.request.method));
            request.insert("uri".into(), json!(i.request.uri));
            let mut response = Map::new();
            body_fields(&mut response, &i.response.body, true);
            response.insert("headers".into(), headers(&i.response.headers));
            let reason = i.response.reason.clone().or_else(|| {
                hyper::StatusCode::from_u16(i.response.status)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .map(str::to_owned)
            });
            response.insert(
                "status".into(),
                json!({"code": i.response.status, "message": reason.unwrap_or_default()}),
            );
            json!({"request": request, "response": response})
        })
        .collect();
    let file = json!({"interactions": interactions, "version": 1});
    serde_yaml_ng::to_string(&file).map_err(|e| format!("cannot write the YAML: {e}"))
}

fn body_fields(side: &mut Map<String, Value>, body: &Body, response: bool) {
    let text = |t: &str| {
        if response {
            json!({"string": t})
        } else if t.is_empty() {
            Value::Null
        } else {
            json!(t)
        }
    };
    match body {
        Body::Empty => side.insert("body".into(), text("")),
        Body::Text(t) => side.insert("body".into(), text(t)),
        Body::Json(value) => side.insert("parsed_body".into(), value.clone()),
    };
}

/// vcrpy's headers: each name (sorted) with the list of its values.
fn headers(headers: &[(String, String)]) -> Value {
    let mut grouped: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, value) in headers {
        grouped.entry(name).or_default().push(value);
    }
    json!(grouped)
}

/// Writes `text` to `path` whole or not at all: into a temporary file beside it, flushed to
/// disk, then renamed over it. The folder is made if it is missing.
pub(crate) fn write_atomic(path: &Path, text: &str) -> Result<(), CassetteError> {
    let io = |what: &str, error: &dyn std::fmt::Display| CassetteError::Io {
        path: path.to_owned(),
        message: format!("cannot {what}: {error}"),
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| io("make its folder", &e))?;
    let mut file = tempfile::Builder::new()
        .prefix(".cassette-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| io("make a temporary file beside it", &e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| io("write it", &e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // A cassette is committed and shared: readable by all, like the files beside it.
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(|e| io("set its permissions", &e))?;
    }
    file.persist(path)
        .map_err(|e| io("rename it into place", &e.error))?;
    Ok(())
}
