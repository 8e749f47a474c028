//! Channels as people other than admins read them. A webhook URL is often its own credential
//! (a Slack or Mattermost incoming hook carries its secret in the path), so viewers and
//! operators see where it goes (scheme and host) and nothing past that; admins, who edit
//! channels, see it whole. Webhook secrets are never shown to anyone.

use crate::{audit::MASKED, catalog::Catalog};

/// `url` up to its host (and port), the rest masked: `https://hooks.slack.com/•••`.
///
/// ```
/// use am_domain::notify::mask_webhook_url;
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

/// Every webhook URL of the catalog's channels (applications, launch settings, groups) masked
/// past its host, for a reader who is not an admin.
pub fn mask_webhook_urls(catalog: &mut Catalog) {
    let urls = catalog
        .applications
        .iter_mut()
        .map(|a| &mut a.webhook_url)
        .chain(
            catalog
                .launch_settings
                .iter_mut()
                .map(|l| &mut l.webhook_url),
        )
        .chain(
            catalog
                .schedule_groups
                .iter_mut()
                .map(|g| &mut g.webhook_url),
        );
    for url in urls.flatten() {
        *url = mask_webhook_url(url);
    }
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
