//! How large a catalog may be. Every write of the catalog (an import, one entity, a node's
//! publication) is checked against these before anything else, so that one oversized document
//! can neither hold the database's write lock for a minute nor fill pages with megabytes of
//! title. The numbers are documented in docs/operations.md, "Limits". The same pass checks
//! the characters of every text (crate::text): a catalog the manager stores is one it can
//! export and import again, on either database.

use crate::{
    ValidationErrors,
    catalog::Catalog,
    text::{self, Lines},
};

/// Entities of one kind (pools, applications, data queues, classifiers, agents, launch
/// settings, schedule groups).
pub const MAX_ENTITIES_PER_KIND: usize = 10_000;
pub const MAX_HOSTS_PER_POOL: usize = 1_000;
pub const MAX_MEMBERS_PER_GROUP: usize = 1_000;
pub const MAX_PARAMETERS_PER_AGENT: usize = 100;
pub const MAX_VALUES_PER_CLASSIFIER: usize = 100_000;
/// Values of all classifiers together.
pub const MAX_CLASSIFIER_VALUES: usize = 500_000;
pub const MAX_FILTER_HEADERS: usize = 50;
/// Titles of entities and parameters, classifier codes and labels.
pub const MAX_TITLE_CHARS: usize = 200;
/// Longer free text: descriptions, filter values, patterns, webhook URLs, cron expressions.
pub const MAX_TEXT_CHARS: usize = 2_000;
/// A launch setting's parameter values, as JSON.
pub const MAX_PARAMETER_BYTES: usize = 64 * 1024;

/// Checks counts and lengths. Returns `false` when a list is longer than its limit: the
/// caller then skips the rules that compare entities with each other, which grow faster than
/// the catalog.
pub(super) fn check(catalog: &Catalog, errors: &mut ValidationErrors) -> bool {
    let counts = [
        ("applications", catalog.applications.len()),
        ("pools", catalog.pools.len()),
        ("data_queues", catalog.data_queues.len()),
        ("classifiers", catalog.classifiers.len()),
        ("agents", catalog.agents.len()),
        ("launch_settings", catalog.launch_settings.len()),
        ("schedule_groups", catalog.schedule_groups.len()),
    ];
    let mut within = true;
    for (list, n) in counts {
        if n > MAX_ENTITIES_PER_KIND {
            within = false;
            errors.push(
                list,
                format!("{n} entries; a catalog holds at most {MAX_ENTITIES_PER_KIND} of a kind"),
            );
        }
    }
    if !within {
        return false;
    }

    let mut text = Texts { errors };
    for (i, a) in catalog.applications.iter().enumerate() {
        text.title(|| format!("applications[{i}].title"), &a.title);
        text.channel(|| format!("applications[{i}]"), &a.channels);
    }
    for (i, p) in catalog.pools.iter().enumerate() {
        text.title(|| format!("pools[{i}].title"), &p.title);
        text.count(
            || format!("pools[{i}].hosts"),
            p.hosts.len(),
            MAX_HOSTS_PER_POOL,
            "hosts",
        );
    }
    for (i, q) in catalog.data_queues.iter().enumerate() {
        text.title(|| format!("data_queues[{i}].title"), &q.title);
    }
    let mut values = 0;
    for (i, c) in catalog.classifiers.iter().enumerate() {
        let at = format!("classifiers[{i}]");
        text.title(|| format!("{at}.title"), &c.title);
        text.count(
            || format!("{at}.values"),
            c.values.len(),
            MAX_VALUES_PER_CLASSIFIER,
            "values",
        );
        values += c.values.len();
        for (j, v) in c.values.iter().enumerate() {
            text.title(|| format!("{at}.values[{j}].code"), &v.code);
            text.title(|| format!("{at}.values[{j}].label"), &v.label);
        }
    }
    if values > MAX_CLASSIFIER_VALUES {
        text.errors.push(
            "classifiers",
            format!(
                "{values} values in all; the classifiers of a catalog hold at most \
                 {MAX_CLASSIFIER_VALUES} together"
            ),
        );
    }
    for (i, a) in catalog.agents.iter().enumerate() {
        let at = format!("agents[{i}]");
        text.title(|| format!("{at}.title"), &a.title);
        text.count(
            || format!("{at}.parameters"),
            a.parameters.len(),
            MAX_PARAMETERS_PER_AGENT,
            "parameters",
        );
        for (j, p) in a.parameters.iter().enumerate() {
            text.title(|| format!("{at}.parameters[{j}].title"), &p.title);
            text.prose(
                || format!("{at}.parameters[{j}].description"),
                &p.description,
            );
            if let Some(pattern) = &p.pattern {
                text.long(|| format!("{at}.parameters[{j}].pattern"), pattern);
            }
            for (bound, value) in [("default", &p.default), ("min", &p.min), ("max", &p.max)] {
                if let Some(v) = value {
                    text.json(|| format!("{at}.parameters[{j}].{bound}"), v);
                }
            }
        }
    }
    for (i, l) in catalog.launch_settings.iter().enumerate() {
        let at = format!("launch_settings[{i}]");
        text.title(|| format!("{at}.title"), &l.title);
        text.channel(|| at.clone(), &l.channels);
        for (name, value) in &l.parameters {
            text.json(|| format!("{at}.parameters.{name}"), value);
        }
        let bytes = serde_json::to_vec(&l.parameters).map_or(0, |v| v.len());
        if bytes > MAX_PARAMETER_BYTES {
            text.errors.push(
                format!("{at}.parameters"),
                format!("{bytes} bytes as JSON; at most {MAX_PARAMETER_BYTES}"),
            );
        }
        if let Some(filter) = &l.filter {
            text.count(
                || format!("{at}.filter.headers"),
                filter.headers.len(),
                MAX_FILTER_HEADERS,
                "headers",
            );
            for (name, value) in &filter.headers {
                text.title(|| format!("{at}.filter.headers"), name);
                text.long(|| format!("{at}.filter.headers.{name}"), value);
            }
        }
    }
    for (i, g) in catalog.schedule_groups.iter().enumerate() {
        let at = format!("schedule_groups[{i}]");
        text.title(|| format!("{at}.title"), &g.title);
        text.long(|| format!("{at}.cron"), &g.cron);
        text.title(|| format!("{at}.time_zone"), &g.time_zone);
        text.channel(|| at.clone(), &g.channels);
        text.count(
            || format!("{at}.members"),
            g.members.len(),
            MAX_MEMBERS_PER_GROUP,
            "members",
        );
    }
    true
}

struct Texts<'a> {
    errors: &'a mut ValidationErrors,
}

impl Texts<'_> {
    // Paths are built only for an error: a catalog at its limits has a million values.
    fn title(&mut self, path: impl FnOnce() -> String, value: &str) {
        self.text(path, value, MAX_TITLE_CHARS, Lines::One);
    }

    /// A longer one-line text: an address, a pattern, a cron expression, a filter value.
    fn long(&mut self, path: impl FnOnce() -> String, value: &str) {
        self.text(path, value, MAX_TEXT_CHARS, Lines::One);
    }

    /// Free text that may break lines: a description.
    fn prose(&mut self, path: impl FnOnce() -> String, value: &str) {
        self.text(path, value, MAX_TEXT_CHARS, Lines::Many);
    }

    /// The texts of an entity's notification channels, under `at`.
    fn channel(&mut self, at: impl Fn() -> String, channels: &crate::catalog::Channels) {
        for (field, value) in [
            ("webhook_url", &channels.webhook_url),
            ("webhook_secret", &channels.webhook_secret),
            ("notify_email", &channels.notify_email),
        ] {
            if let Some(v) = value {
                self.long(|| format!("{}.{field}", at()), v);
            }
        }
    }

    /// A JSON value (a parameter's value or bound): PostgreSQL stores no NUL in JSON.
    fn json(&mut self, path: impl FnOnce() -> String, value: &serde_json::Value) {
        if text::json_has_nul(value) {
            self.errors.push(
                path(),
                "a text in it contains a NUL character (U+0000), which cannot be stored",
            );
        }
    }

    fn text(&mut self, path: impl FnOnce() -> String, value: &str, max: usize, lines: Lines) {
        // Bytes bound characters from above: most values are decided without counting.
        if value.len() > max {
            let n = value.chars().count();
            if n > max {
                self.errors
                    .push(path(), format!("{n} characters long; at most {max}"));
                return;
            }
        }
        if let Some(c) = text::forbidden(value, lines) {
            self.errors.push(path(), text::forbidden_message(c, lines));
        }
    }

    fn count(&mut self, path: impl FnOnce() -> String, n: usize, max: usize, what: &str) {
        if n > max {
            self.errors
                .push(path(), format!("{n} {what}; at most {max}"));
        }
    }
}
