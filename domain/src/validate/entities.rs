//! Rules of applications, pools, data queues, classifiers and agents.

use super::{FirstSeen, check_channels, check_id};
use crate::{
    ValidationErrors,
    catalog::{Catalog, InputKind},
    ids::{validate_exchange_name, validate_host_name},
    params::{ParamType, validate_codes, validate_schema},
};

pub(super) fn applications(catalog: &Catalog, errors: &mut ValidationErrors) {
    let mut seen = FirstSeen::new();
    for (i, app) in catalog.applications.iter().enumerate() {
        let at = format!("applications[{i}]");
        check_id(errors, format!("{at}.id"), &app.id);
        if let Some(first) = seen.check(app.id.as_str(), i) {
            errors.push(
                format!("{at}.id"),
                format!(
                    "application '{}' is already defined at applications[{first}]",
                    app.id
                ),
            );
        }
        if app.default_pool.is_empty() {
            errors.push(format!("{at}.default_pool"), "a default pool is required");
        } else if catalog.pool(&app.default_pool).is_none() {
            errors.push(
                format!("{at}.default_pool"),
                format!("pool '{}' does not exist", app.default_pool),
            );
        }
        check_channels(errors, &at, &app.channels);
    }
}

pub(super) fn pools(catalog: &Catalog, errors: &mut ValidationErrors) {
    let mut seen = FirstSeen::new();
    for (i, pool) in catalog.pools.iter().enumerate() {
        let at = format!("pools[{i}]");
        check_id(errors, format!("{at}.id"), &pool.id);
        if let Some(first) = seen.check(pool.id.as_str(), i) {
            errors.push(
                format!("{at}.id"),
                format!("pool '{}' is already defined at pools[{first}]", pool.id),
            );
        }
        // Host names are case-insensitive: `APP-01` and `app-01` are one machine.
        let mut hosts = FirstSeen::new();
        for (j, host) in pool.hosts.iter().enumerate() {
            if let Err(e) = validate_host_name(host) {
                errors.push(format!("{at}.hosts[{j}]"), e);
            }
            if let Some(first) = hosts.check(host.to_ascii_lowercase(), j) {
                errors.push(
                    format!("{at}.hosts[{j}]"),
                    format!("host '{host}' is already listed at hosts[{first}]"),
                );
            }
        }
    }
}

pub(super) fn data_queues(catalog: &Catalog, errors: &mut ValidationErrors) {
    let mut seen = FirstSeen::new();
    let mut addresses = FirstSeen::new();
    for (i, queue) in catalog.data_queues.iter().enumerate() {
        let at = format!("data_queues[{i}]");
        check_id(errors, format!("{at}.id"), &queue.id);
        if let Some(first) = seen.check(queue.id.as_str(), i) {
            errors.push(
                format!("{at}.id"),
                format!(
                    "data queue '{}' is already defined at data_queues[{first}]",
                    queue.id
                ),
            );
        }
        // Without an address the id is the exchange name, so the id carries the blame.
        let address_path = if queue.address.is_some() {
            format!("{at}.address")
        } else {
            format!("{at}.id")
        };
        let address = queue.effective_address();
        if let Err(e) = validate_exchange_name(address) {
            errors.push(address_path.clone(), e);
        }
        if let Some(first) = addresses.check(address, i) {
            let other = catalog.data_queues.get(first).map_or("", |q| q.id.as_str());
            errors.push(
                address_path,
                format!("exchange '{address}' is already the address of data queue '{other}'"),
            );
        }
        if queue.delay.is_some_and(|d| d.is_zero()) {
            errors.push(format!("{at}.delay"), "must be longer than 0s when set");
        }
    }
}

pub(super) fn classifiers(catalog: &Catalog, errors: &mut ValidationErrors) {
    let mut seen = FirstSeen::new();
    for (i, classifier) in catalog.classifiers.iter().enumerate() {
        let at = format!("classifiers[{i}]");
        if catalog.application(&classifier.application).is_none() {
            errors.push(
                format!("{at}.application"),
                format!("application '{}' does not exist", classifier.application),
            );
        }
        check_id(errors, format!("{at}.name"), &classifier.name);
        if let Some(first) = seen.check(
            (classifier.application.as_str(), classifier.name.as_str()),
            i,
        ) {
            errors.push(
                format!("{at}.name"),
                format!(
                    "classifier '{}' of application '{}' is already defined at classifiers[{first}]",
                    classifier.name, classifier.application
                ),
            );
        }
        let mut codes = FirstSeen::new();
        for (j, value) in classifier.values.iter().enumerate() {
            let path = format!("{at}.values[{j}].code");
            if value.code.trim().is_empty() {
                errors.push(path, "a code is required");
            } else if let Some(first) = codes.check(value.code.as_str(), j) {
                errors.push(
                    path,
                    format!("code '{}' is already used at values[{first}]", value.code),
                );
            }
        }
    }
}

pub(super) fn agents(catalog: &Catalog, errors: &mut ValidationErrors) {
    let mut seen = FirstSeen::new();
    for (i, agent) in catalog.agents.iter().enumerate() {
        let at = format!("agents[{i}]");
        let app_exists = catalog.application(&agent.application).is_some();
        if !app_exists {
            errors.push(
                format!("{at}.application"),
                format!("application '{}' does not exist", agent.application),
            );
        }
        check_id(errors, format!("{at}.id"), &agent.id);
        if let Some(first) = seen.check((agent.application.as_str(), agent.id.as_str()), i) {
            errors.push(
                format!("{at}.id"),
                format!(
                    "agent '{}/{}' is already defined at agents[{first}]",
                    agent.application, agent.id
                ),
            );
        }
        // A messages agent without a data queue is allowed: a node published it before its
        // data queue was in the catalog, and it waits, flagged, for an operator to pick one.
        // Its launch settings are what cannot exist until then (launch.rs).
        match (agent.input, &agent.data_queue) {
            (InputKind::Messages, Some(q)) if catalog.data_queue(q).is_none() => {
                errors.push(format!("{at}.data_queue"), format!("data queue '{q}' does not exist"));
            }
            (InputKind::Standalone, Some(_)) => errors.push(
                format!("{at}.data_queue"),
                "a standalone agent takes no data queue; remove it or make the agent a messages agent",
            ),
            _ => {}
        }

        errors.extend_prefixed(
            &format!("{at}.parameters"),
            validate_schema(&agent.parameters),
        );
        for (j, spec) in agent.parameters.iter().enumerate() {
            let ParamType::Classifier(name) = &spec.ty else {
                continue;
            };
            match catalog.classifier(&agent.application, name) {
                // A missing application is reported above; naming its classifiers too is noise.
                None if app_exists => errors.push(
                    format!("{at}.parameters[{j}].type"),
                    format!(
                        "classifier '{name}' is not published by application '{}'",
                        agent.application
                    ),
                ),
                None => {}
                // The schema check could not see the classifier; defaults are checked against it here.
                Some(classifier) => {
                    if let Some(default) = spec.default.as_ref() {
                        errors.extend_prefixed(
                            &format!("{at}.parameters[{j}].default"),
                            validate_codes(spec, default, classifier),
                        );
                    }
                }
            }
        }
    }
}
