//! The write-only rule of webhook secrets across a catalog write, and the webhook URLs as
//! readers who are not admins see them. Part of the catalog.

use super::Catalog;
use crate::masked::mask_webhook_url;

/// Applies the write-only rule of webhook secrets to `new`, a catalog about to replace `old`:
/// an application, launch setting or schedule group that leaves its secret out keeps the one `old` has, and an
/// empty secret removes it. Every catalog write goes through it, so an export (which never
/// carries secrets) imported back changes none.
pub fn keep_secrets(new: &mut Catalog, old: &Catalog) {
    fn keep(new: &mut Option<String>, old: Option<&String>) {
        match new.as_deref() {
            None => new.clone_from(&old.cloned()),
            Some("") => *new = None,
            Some(_) => {}
        }
    }
    for a in &mut new.applications {
        let stored = old
            .application(&a.id)
            .and_then(|o| o.channels.webhook_secret.as_ref());
        keep(&mut a.channels.webhook_secret, stored);
    }
    for l in &mut new.launch_settings {
        let stored = old
            .launch_setting(&l.id)
            .and_then(|o| o.channels.webhook_secret.as_ref());
        keep(&mut l.channels.webhook_secret, stored);
    }
    for g in &mut new.schedule_groups {
        let stored = old
            .schedule_group(&g.id)
            .and_then(|o| o.channels.webhook_secret.as_ref());
        keep(&mut g.channels.webhook_secret, stored);
    }
}

/// Every webhook URL of the catalog's channels (applications, launch settings, groups) masked
/// past its host, for a reader who is not an admin.
pub fn mask_webhook_urls(catalog: &mut Catalog) {
    let urls = catalog
        .applications
        .iter_mut()
        .map(|a| &mut a.channels.webhook_url)
        .chain(
            catalog
                .launch_settings
                .iter_mut()
                .map(|l| &mut l.channels.webhook_url),
        )
        .chain(
            catalog
                .schedule_groups
                .iter_mut()
                .map(|g| &mut g.channels.webhook_url),
        );
    for url in urls.flatten() {
        *url = mask_webhook_url(url);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_kept_when_left_out_removed_when_empty_and_never_serialized() {
        use super::super::{Application, Channels};
        let app = |id: &str, secret: Option<&str>| Application {
            id: id.into(),
            title: String::new(),
            default_pool: "p".into(),
            channels: Channels {
                webhook_url: Some("https://hooks.example/x".into()),
                webhook_secret: secret.map(str::to_owned),
                ..Default::default()
            },
        };
        let mut old = Catalog::new();
        old.applications = vec![app("a", Some("s1")), app("b", Some("s2")), app("c", None)];
        let mut new = Catalog::new();
        new.applications = vec![
            app("a", None),
            app("b", Some("")),
            app("c", Some("s3")),
            app("d", None),
        ];
        keep_secrets(&mut new, &old);
        let secrets: Vec<Option<&str>> = new
            .applications
            .iter()
            .map(|a| a.channels.webhook_secret.as_deref())
            .collect();
        assert_eq!(secrets, [Some("s1"), None, Some("s3"), None]);
        let json = serde_json::to_string(&new).expect("json");
        assert!(
            !json.contains("s1") && !json.contains("webhook_secret"),
            "{json}"
        );
        // ...but a document may carry one in.
        let read: Application =
            serde_json::from_str(r#"{"id":"a","default_pool":"p","webhook_secret":"k"}"#)
                .expect("parse");
        assert_eq!(read.channels.webhook_secret.as_deref(), Some("k"));
        // A schedule group's own webhook keeps its secret the same way.
        let group = |secret: &str| -> super::super::ScheduleGroup {
            serde_json::from_value(serde_json::json!({
                "id": "g", "application": "a", "cron": "0 2 * * *", "webhook_secret": secret
            }))
            .expect("group")
        };
        let mut old = Catalog::new();
        old.schedule_groups = vec![group("g-secret")];
        let mut new = Catalog::new();
        let mut left_out = group("");
        left_out.channels.webhook_secret = None;
        new.schedule_groups = vec![left_out];
        keep_secrets(&mut new, &old);
        assert_eq!(
            new.schedule_groups[0].channels.webhook_secret.as_deref(),
            Some("g-secret")
        );
    }
}
