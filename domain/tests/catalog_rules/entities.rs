//! Rules of ids, uniqueness, references, agents, pools and data queues.

use super::*;

// ---- ids ----

#[test]
fn ids_have_the_id_format() {
    assert_valid(&with(|c| {
        c.pools.push(am_domain::catalog::Pool {
            id: "p.3_x-y".into(),
            title: String::new(),
            hosts: vec![],
        });
    }));
    type Change = fn(&mut Catalog);
    let cases: [(&str, Change); 7] = [
        ("applications[1].id", |c| {
            c.applications[1].id = "CRM".into();
            c.agents.retain(|a| a.application != "crm");
            c.launch_settings.retain(|l| l.application != "crm");
        }),
        ("pools[1].id", |c| c.pools[1].id = "p 2".into()),
        ("data_queues[0].id", |c| {
            c.data_queues[0].id = "-invoices".into()
        }),
        ("classifiers[0].name", |c| {
            c.classifiers[0].name = "Organisations".into()
        }),
        ("agents[2].id", |c| c.agents[2].id = "re/concile".into()),
        ("launch_settings[4].id", |c| {
            c.launch_settings[4].id = "crm sync".into()
        }),
        ("schedule_groups[1].id", |c| {
            c.schedule_groups[1].id = String::new()
        }),
    ];
    for (path, change) in cases {
        assert_error(&with(change), path, "a–z");
    }
    assert_error(
        &with(|c| c.launch_settings[4].id = "x".repeat(129)),
        "launch_settings[4].id",
        "129 characters",
    );
}

// ---- uniqueness ----

#[test]
fn global_ids_are_unique() {
    assert_valid(&with(|c| {
        c.applications
            .push(from_json(json!({ "id": "hr", "default_pool": "p1" })));
    }));
    assert_error(
        &with(|c| c.applications.push(c.applications[0].clone())),
        "applications[2].id",
        "application 'billing' is already defined at applications[0]",
    );
    assert_error(
        &with(|c| c.pools.push(c.pools[1].clone())),
        "pools[2].id",
        "already defined at pools[1]",
    );
    assert_error(
        &with(|c| {
            c.data_queues.push(am_domain::catalog::DataQueue {
                address: Some("other".into()),
                ..c.data_queues[0].clone()
            })
        }),
        "data_queues[2].id",
        "already defined at data_queues[0]",
    );
    assert_error(
        &with(|c| c.launch_settings.push(c.launch_settings[4].clone())),
        "launch_settings[5].id",
        "launch setting 'crm.sync.1' is already defined at launch_settings[4]",
    );
    assert_error(
        &with(|c| c.schedule_groups.push(c.schedule_groups[0].clone())),
        "schedule_groups[2].id",
        "already defined at schedule_groups[0]",
    );
}

#[test]
fn agents_are_unique_per_application() {
    assert_valid(&with(|c| {
        let mut same_id_elsewhere = c.agents[3].clone();
        same_id_elsewhere.id = "invoice-export".into();
        c.agents.push(same_id_elsewhere);
    }));
    assert_error(
        &with(|c| c.agents.push(c.agents[0].clone())),
        "agents[4].id",
        "agent 'billing/invoice-export' is already defined at agents[0]",
    );
}

#[test]
fn classifiers_are_unique_per_application() {
    assert_valid(&with(|c| {
        let mut crm = c.classifiers[0].clone();
        crm.application = "crm".into();
        c.classifiers.push(crm);
    }));
    assert_error(
        &with(|c| c.classifiers.push(c.classifiers[0].clone())),
        "classifiers[1].name",
        "classifier 'organisations' of application 'billing' is already defined at classifiers[0]",
    );
}

#[test]
fn classifier_codes_are_unique_and_present() {
    assert_valid(&with(|c| {
        c.classifiers[0].values.push(ClassifierValue {
            code: "ACME".into(),
            label: "x".into(),
        })
    }));
    assert_error(
        &with(|c| {
            c.classifiers[0].values.push(ClassifierValue {
                code: "acme".into(),
                label: "again".into(),
            })
        }),
        "classifiers[0].values[3].code",
        "code 'acme' is already used at values[0]",
    );
    assert_error(
        &with(|c| c.classifiers[0].values[1].code = " ".into()),
        "classifiers[0].values[1].code",
        "a code is required",
    );
}

// ---- references ----

#[test]
fn application_default_pool_exists() {
    assert_valid(&with(|c| c.applications[1].default_pool = "p1".into()));
    assert_error(
        &with(|c| c.applications[1].default_pool = "p9".into()),
        "applications[1].default_pool",
        "pool 'p9' does not exist",
    );
    assert_error(
        &with(|c| c.applications[1].default_pool = String::new()),
        "applications[1].default_pool",
        "required",
    );
}

#[test]
fn classifier_application_exists() {
    assert_valid(&with(|c| {
        c.classifiers
            .push(from_json(json!({ "application": "crm", "name": "sites" })));
    }));
    assert_error(
        &with(|c| c.classifiers[0].application = "hr".into()),
        "classifiers[0].application",
        "application 'hr' does not exist",
    );
}

#[test]
fn agent_application_exists() {
    assert_valid(&with(|c| {
        c.agents
            .push(from_json(json!({ "application": "crm", "id": "report",
            "input": "standalone", "concurrency": "ANY", "overlap": "skip" })));
    }));
    assert_error(
        &with(|c| c.agents[3].application = "hr".into()),
        "agents[3].application",
        "application 'hr' does not exist",
    );
}

#[test]
fn agent_data_queue_exists() {
    assert_valid(&with(|c| c.agents[3].data_queue = Some("events".into())));
    assert_error(
        &with(|c| c.agents[3].data_queue = Some("nope".into())),
        "agents[3].data_queue",
        "data queue 'nope' does not exist",
    );
}

#[test]
fn launch_setting_references_exist() {
    assert_valid(&with(|c| c.launch_settings[4].pool = Some("p1".into())));
    assert_error(
        &with(|c| c.launch_settings[4].application = "hr".into()),
        "launch_settings[4].application",
        "application 'hr' does not exist",
    );
    assert_error(
        &with(|c| c.launch_settings[4].agent = "nope".into()),
        "launch_settings[4].agent",
        "agent 'crm/nope' does not exist",
    );
    assert_error(
        &with(|c| c.launch_settings[4].pool = Some("p9".into())),
        "launch_settings[4].pool",
        "pool 'p9' does not exist",
    );
}

#[test]
fn group_application_and_members_exist() {
    assert_valid(&with(|c| {
        c.launch_settings
            .push(scheduled("billing.reconcile.2", "billing", "reconcile"));
        c.schedule_groups[1]
            .members
            .push("billing.reconcile.2".into());
    }));
    assert_error(
        &with(|c| c.schedule_groups[1].application = "hr".into()),
        "schedule_groups[1].application",
        "application 'hr' does not exist",
    );
    assert_error(
        &with(|c| c.schedule_groups[1].members.push("ghost".into())),
        "schedule_groups[1].members[1]",
        "launch setting 'ghost' does not exist",
    );
}

// ---- agents ----

#[test]
fn a_messages_agent_without_a_data_queue_can_have_no_launch_setting() {
    assert_valid(&with(|c| c.agents[3].data_queue = Some("events".into())));
    // Alone, it is valid: it waits, flagged, for an operator to pick a data queue ...
    assert_valid(&with(|c| {
        c.agents[3].data_queue = None;
        c.launch_settings.retain(|l| l.agent != "sync");
    }));
    // ... and its launch settings are what cannot exist until then.
    assert_error(
        &with(|c| c.agents[3].data_queue = None),
        "launch_settings[4].agent",
        "agent 'crm/sync' needs a data queue",
    );
}

#[test]
fn standalone_agents_have_no_data_queue() {
    assert_valid(&with(crm_sync_standalone));
    assert_error(
        &with(|c| {
            crm_sync_standalone(c);
            c.agents[3].data_queue = Some("invoices".into());
        }),
        "agents[3].data_queue",
        "standalone agent takes no data queue",
    );
}

#[test]
fn agent_parameter_schema_is_valid() {
    assert_valid(&with(|c| {
        c.agents[2]
            .parameters
            .push(ParamSpec::new("batch_size", ParamType::Integer))
    }));
    assert_error(
        &with(|c| {
            c.agents[2]
                .parameters
                .push(ParamSpec::new("Batch", ParamType::Integer))
        }),
        "agents[2].parameters[0].name",
        "not a valid parameter name",
    );
    assert_error(
        &with(|c| c.agents[0].parameters[2].default = Some(json!(5000))),
        "agents[0].parameters[2].default",
        "must be at most 1000, got 5000",
    );
    assert_error(
        &with(|c| {
            c.agents[0]
                .parameters
                .push(ParamSpec::new("limit", ParamType::String))
        }),
        "agents[0].parameters[3].name",
        "parameter 'limit' is already defined at [2]",
    );
}

#[test]
fn classifier_parameters_name_a_classifier_of_the_application() {
    assert_error(
        &with(|c| {
            c.agents[3].parameters.push(ParamSpec::new(
                "org",
                ParamType::Classifier("organisations".into()),
            ))
        }),
        "agents[3].parameters[0].type",
        "classifier 'organisations' is not published by application 'crm'",
    );
    assert_valid(&with(|c| {
        c.agents[0].parameters[1].default = Some(json!(["initech"]))
    }));
    assert_error(
        &with(|c| c.agents[0].parameters[1].default = Some(json!(["acme", "umbrella"]))),
        "agents[0].parameters[1].default[1]",
        "value 'umbrella' is not in classifier 'organisations'",
    );
}

// ---- pools and data queues ----

#[test]
fn pool_hosts_are_valid_and_listed_once() {
    assert_valid(&with(|c| c.pools[1].hosts.push("10.0.0.7".into())));
    assert_error(
        &with(|c| c.pools[1].hosts.push("crm_02".into())),
        "pools[1].hosts[1]",
        "not a valid host name",
    );
    assert_error(
        &with(|c| c.pools[0].hosts.push("APP-01".into())),
        "pools[0].hosts[2]",
        "host 'APP-01' is already listed at hosts[0]",
    );
}

#[test]
fn data_queue_addresses_are_exchange_names() {
    assert_valid(&with(|c| {
        c.data_queues[0].address = Some("Billing:Invoices.v2".into())
    }));
    assert_error(
        &with(|c| c.data_queues[0].address = Some("amq.direct".into())),
        "data_queues[0].address",
        "must not start with 'amq.'",
    );
    assert_error(
        &with(|c| c.data_queues[0].address = Some("a/b".into())),
        "data_queues[0].address",
        "not a valid exchange name",
    );
    assert_error(
        &with(|c| c.data_queues[0].address = Some("x".repeat(256))),
        "data_queues[0].address",
        "256 characters",
    );
    assert_error(
        &with(|c| c.data_queues[0].address = Some("billing.events".into())),
        "data_queues[1].address",
        "exchange 'billing.events' is already the address of data queue 'invoices'",
    );
}

#[test]
fn data_queue_delay_is_positive() {
    assert_valid(&with(|c| {
        c.data_queues[0].delay = Some(HumanDuration::from_millis(1))
    }));
    assert_error(
        &with(|c| c.data_queues[0].delay = Some(HumanDuration::from_secs(0))),
        "data_queues[0].delay",
        "longer than 0s",
    );
}
