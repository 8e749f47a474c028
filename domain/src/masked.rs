//! What a reader who may not see a value sees instead. A webhook URL is often its own
//! credential (a Slack or Mattermost incoming hook carries its secret in the path), so viewers
//! and operators see where it goes (scheme and host) and nothing past that; admins, who edit
//! channels, see it whole. Secrets are never shown to anyone.

/// What stands for a masked value.
pub const MASKED: &str = "•••";

/// `url` up to its host (and port), the rest masked: `https://hooks.slack.com/•••`.
///
/// ```
/// use am_domain::masked::mask_webhook_url;
/// assert_eq!(
///     mask_webhook_url("https://hooks.slack.com/services/T0/B0/secret"),
///     "https://hooks.slack.com/•••"
/// );
/// assert_eq!(mask_webhook_url("http://ops.example:8080"), "http://ops.example:8080");
/// assert_eq!(mask_webhook_url("not a url"), "•••");
/// ```
pub fn mask_webhook_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return MASKED.to_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    // Credentials in the authority are masked too.
    let host = rest[..end].rsplit('@').next().unwrap_or_default();
    if end == rest.len() && !rest[..end].contains('@') {
        return url.to_owned();
    }
    format!("{scheme}://{host}/{MASKED}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_scheme_and_host_are_shown() {
        assert_eq!(
            mask_webhook_url("https://user:pw@hooks.example/x?token=1"),
            "https://hooks.example/•••"
        );
        assert_eq!(
            mask_webhook_url("https://h.example/"),
            "https://h.example/•••"
        );
        assert_eq!(
            mask_webhook_url("https://h.example?x=1"),
            "https://h.example/•••"
        );
    }
}
