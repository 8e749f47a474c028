//! Query strings whose mistakes come back like the bodies' (`json.rs`): 422 with the path of the
//! parameter (`limit: at most 1000`), not a bare parser message with status 400.

use crate::error::AppError;
use axum::{extract::FromRequestParts, http::request::Parts};
use serde::{Deserialize, Deserializer, de::DeserializeOwned};

/// The most items one page of any list holds when asked for (each list also has its own,
/// lower or equal cap, which it applies without refusing).
pub const MAX_LIMIT: u64 = 1000;

pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(ApiQuery)
            .map_err(|e| super::json::shape_error(e.path(), &e.inner().to_string()))
    }
}

/// A page size: absent or 0 for the list's default, at most [`MAX_LIMIT`].
pub fn limit<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let value = Option::<u64>::deserialize(d)?;
    match value {
        Some(v) if v > MAX_LIMIT => Err(serde::de::Error::custom(format!(
            "{v} is too large: at most {MAX_LIMIT} per page"
        ))),
        _ => Ok(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::{extract::FromRequestParts, http::Request};

    #[derive(Debug, Deserialize)]
    struct Q {
        #[serde(default, deserialize_with = "limit")]
        limit: Option<u64>,
    }

    async fn read(uri: &str) -> Result<Option<u64>, String> {
        let (mut parts, ()) = Request::get(uri).body(()).expect("request").into_parts();
        ApiQuery::<Q>::from_request_parts(&mut parts, &())
            .await
            .map(|q| q.0.limit)
            .map_err(|e| format!("{e:?}"))
    }

    #[tokio::test]
    async fn a_bad_value_is_refused_at_its_path() {
        assert_eq!(read("/x?limit=20").await, Ok(Some(20)));
        assert_eq!(read("/x").await, Ok(None));
        for bad in [
            "/x?limit=1001",
            "/x?limit=9223372036854775808",
            "/x?limit=ten",
        ] {
            let e = read(bad).await.expect_err(bad);
            assert!(e.contains("limit"), "{bad}: {e}");
        }
    }
}
