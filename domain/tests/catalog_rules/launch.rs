//! Rules of launch settings and schedule groups.

use super::*;

// ---- launch settings ----

#[test]
fn standalone_agents_only_have_scheduled_launch_settings() {
    assert_valid(&with(|c| {
        c.launch_settings
            .push(scheduled("billing.cleanup.2", "billing", "cleanup"));
        c.schedule_groups[0]
            .members
            .push("billing.cleanup.2".into());
    }));
    assert_error(
        &with(|c| {
            c.launch_settings[2].kind = LaunchKind::Stream;
            c.schedule_groups[0].members.pop();
        }),
        "launch_settings[2].kind",
        "agent 'billing/cleanup' is standalone, so it can only have scheduled launch settings",
    );
}

#[test]
fn stream_launch_settings_need_a_messages_agent() {
    assert_valid(&with(|c| {
        let mut second = c.launch_settings[0].clone();
        second.id = "billing.invoice-export.2".into();
        second.stream_mode = Some(StreamMode::Asap);
        c.launch_settings.push(second);
    }));
    assert_error(
        &with(|c| {
            c.agents[3].input = InputKind::Standalone;
            c.agents[3].data_queue = None;
        }),
        "launch_settings[4].kind",
        "stream needs a messages agent",
    );
}

#[test]
fn stream_options_only_on_stream_launch_settings() {
    assert_valid(&with(|c| {
        c.launch_settings[4].filter = Some(MessageFilter::default())
    }));
    assert_error(
        &with(|c| c.launch_settings[1].stream_mode = Some(StreamMode::Asap)),
        "launch_settings[1].stream_mode",
        "only applies to stream",
    );
    assert_error(
        &with(|c| c.launch_settings[1].filter = Some(MessageFilter::default())),
        "launch_settings[1].filter",
        "only applies to stream",
    );
    let mut blank_header = MessageFilter::default();
    blank_header.headers.insert(String::new(), "x".into());
    assert_error(
        &with(|c| c.launch_settings[4].filter = Some(blank_header)),
        "launch_settings[4].filter.headers",
        "must not be empty",
    );
    for bad in [
        "</textarea><script>",
        "a b",
        "x-match",
        "X-Tenant",
        "tab\there",
    ] {
        let mut filter = MessageFilter::default();
        filter.headers.insert(bad.into(), "x".into());
        assert_error(
            &with(|c| c.launch_settings[4].filter = Some(filter)),
            "launch_settings[4].filter.headers",
            "header name",
        );
    }
    let mut fine = MessageFilter::default();
    fine.headers
        .insert("Tenant_Id.v2".into(), "<b>any value</b>".into());
    assert_valid(&with(|c| c.launch_settings[0].filter = Some(fine)));
}

#[test]
fn launch_settings_of_a_queue_data_queue_neither_filter_nor_wait() {
    let mut filter = MessageFilter::default();
    filter.headers.insert("type".into(), "invoice".into());
    assert_error(
        &with(|c| c.launch_settings[4].filter = Some(filter)),
        "launch_settings[4].filter",
        "data queue 'invoices' is of kind queue",
    );
    assert_error(
        &with(|c| c.launch_settings[4].stream_mode = Some(StreamMode::Delayed)),
        "launch_settings[4].stream_mode",
        "so none can be Delayed",
    );
}

#[test]
fn retries_need_a_bounded_number_of_delays() {
    assert_error(
        &with(|c| {
            c.launch_settings[0].retry.multiplier = 1.001;
            c.launch_settings[0].retry.max_deliveries = 1000;
        }),
        "launch_settings[0].retry.multiplier",
        "more than 64 distinct delays",
    );
}

#[test]
fn delayed_streams_need_a_queue_delay() {
    assert_valid(&with(|c| {
        c.launch_settings[4].stream_mode = Some(StreamMode::Asap)
    }));
    assert_error(
        &with(|c| c.launch_settings[4].stream_mode = Some(StreamMode::Delayed)),
        "launch_settings[4].stream_mode",
        "a delayed stream needs data queue 'invoices' to have a delay",
    );
}

#[test]
fn idle_timeout_only_on_scheduled_messages_launch_settings() {
    assert_valid(&with(|c| {
        c.launch_settings[1].idle_timeout = Some(HumanDuration::from_secs(1))
    }));
    assert_error(
        &with(|c| c.launch_settings[0].idle_timeout = Some(HumanDuration::from_secs(60))),
        "launch_settings[0].idle_timeout",
        "only applies to scheduled launch settings of messages agents",
    );
    assert_error(
        &with(|c| c.launch_settings[2].idle_timeout = Some(HumanDuration::from_secs(60))),
        "launch_settings[2].idle_timeout",
        "messages agents",
    );
    assert_error(
        &with(|c| c.launch_settings[1].idle_timeout = Some(HumanDuration::from_secs(0))),
        "launch_settings[1].idle_timeout",
        "longer than 0s",
    );
}

#[test]
fn scheduled_launch_settings_belong_to_a_group() {
    assert_valid(&with(|c| {
        c.schedule_groups[1].members.clear();
        c.schedule_groups
            .push(group("weekly", "billing", &["billing.reconcile.hourly"]));
    }));
    assert_error(
        &with(|c| c.schedule_groups[1].members.clear()),
        "launch_settings[3]",
        "scheduled launch setting 'billing.reconcile.hourly' is in no schedule group",
    );
}

#[test]
fn launch_setting_parameters_match_the_agent_schema() {
    assert_valid(&with(|c| {
        c.launch_settings[1]
            .parameters
            .insert("orgs".into(), json!(["initech"]));
        c.launch_settings[1]
            .parameters
            .insert("limit".into(), json!(null));
    }));
    assert_error(
        &with(|c| {
            c.launch_settings[1]
                .parameters
                .insert("org_id".into(), json!("x"));
        }),
        "launch_settings[1].parameters.org_id",
        "value 'x' is not in classifier 'organisations'",
    );
    assert_error(
        &with(|c| {
            c.launch_settings[0]
                .parameters
                .insert("orgs".into(), json!(["acme", 7]));
        }),
        "launch_settings[0].parameters.orgs[1]",
        "expected a code of classifier 'organisations', got 7",
    );
    assert_error(
        &with(|c| {
            c.launch_settings[1]
                .parameters
                .insert("limit".into(), json!(0));
        }),
        "launch_settings[1].parameters.limit",
        "must be at least 1, got 0",
    );
    assert_error(
        &with(|c| {
            c.launch_settings[1]
                .parameters
                .insert("colour".into(), json!("red"));
        }),
        "launch_settings[1].parameters.colour",
        "no parameter 'colour' in the agent's schema",
    );
    assert_error(
        &with(|c| {
            c.launch_settings[1].parameters.remove("org_id");
        }),
        "launch_settings[1].parameters.org_id",
        "required",
    );
}

#[test]
fn failure_threshold_is_at_least_one() {
    assert_valid(&with(|c| c.launch_settings[2].failure_threshold = 1));
    assert_error(
        &with(|c| c.launch_settings[2].failure_threshold = 0),
        "launch_settings[2].failure_threshold",
        "must be at least 1, got 0",
    );
}

#[test]
fn retry_policy_is_sane() {
    assert_valid(&with(|c| {
        let r = &mut c.launch_settings[0].retry;
        r.multiplier = 1.0;
        r.max_delay = r.initial_delay;
        r.max_deliveries = 1;
    }));
    assert_error(
        &with(|c| c.launch_settings[0].retry.initial_delay = HumanDuration::from_secs(0)),
        "launch_settings[0].retry.initial_delay",
        "longer than 0s",
    );
    for bad in [0.5, f64::NAN, f64::INFINITY] {
        assert_error(
            &with(|c| c.launch_settings[0].retry.multiplier = bad),
            "launch_settings[0].retry.multiplier",
            "finite number of at least 1",
        );
    }
    assert_error(
        &with(|c| c.launch_settings[0].retry.max_delay = HumanDuration::from_millis(500)),
        "launch_settings[0].retry.max_delay",
        "must be at least initial_delay (1s), got 500ms",
    );
    assert_error(
        &with(|c| c.launch_settings[0].retry.max_deliveries = 0),
        "launch_settings[0].retry.max_deliveries",
        "must be at least 1",
    );
}

#[test]
fn dead_letter_settings_are_sane() {
    assert_valid(&with(|c| {
        c.launch_settings[0].dead_letter.policy = DeadLetterPolicy::Park;
        c.launch_settings[0].dead_letter.notify_threshold = Some(1);
    }));
    assert_error(
        &with(|c| {
            c.launch_settings[0].dead_letter.policy = DeadLetterPolicy::Park;
            c.launch_settings[0].dead_letter.park_cooldown = HumanDuration::from_secs(0);
        }),
        "launch_settings[0].dead_letter.park_cooldown",
        "longer than 0s",
    );
    assert_error(
        &with(|c| c.launch_settings[0].dead_letter.notify_threshold = Some(0)),
        "launch_settings[0].dead_letter.notify_threshold",
        "at least 1",
    );
}

#[test]
fn a_forward_policy_names_a_usable_exchange_and_only_it_does() {
    let forward = |to: Option<&str>| {
        with(|c| {
            c.launch_settings[0].dead_letter.policy = DeadLetterPolicy::Forward;
            c.launch_settings[0].dead_letter.forward_to = to.map(str::to_owned);
        })
    };
    assert_valid(&forward(Some("billing.errors")));
    let at = "launch_settings[0].dead_letter.forward_to";
    assert_error(&forward(None), at, "required with policy forward");
    assert_error(&forward(Some("")), at, "must not be empty");
    assert_error(&forward(Some("bad name")), at, "` ` is not allowed");
    assert_error(&forward(Some("amq.direct")), at, "belong to the broker");
    assert_error(&forward(Some(&"x".repeat(256))), at, "at most 255 bytes");
    assert_error(
        &with(|c| c.launch_settings[0].dead_letter.forward_to = Some("errors".into())),
        at,
        "only with policy forward",
    );
    // A node acts on `forward` as on `dead-letter`: forwarding is the manager's.
    let c = forward(Some("billing.errors"));
    let seen = c.launch_settings[0].dead_letter.for_nodes();
    assert_eq!(seen.policy, DeadLetterPolicy::DeadLetter);
    assert_eq!(seen.forward_to, None);
}

#[test]
fn recovery_timeouts_are_positive() {
    assert_valid(&with(|c| {
        c.launch_settings[0].recovery.max_run_time = Some(HumanDuration::from_secs(3600))
    }));
    assert_error(
        &with(|c| c.launch_settings[0].recovery.start_timeout = HumanDuration::from_secs(0)),
        "launch_settings[0].recovery.start_timeout",
        "longer than 0s",
    );
    assert_error(
        &with(|c| c.launch_settings[0].recovery.work_timeout = HumanDuration::from_secs(0)),
        "launch_settings[0].recovery.work_timeout",
        "longer than 0s",
    );
    assert_error(
        &with(|c| c.launch_settings[0].recovery.max_run_time = Some(HumanDuration::from_secs(0))),
        "launch_settings[0].recovery.max_run_time",
        "longer than 0s",
    );
}

#[test]
fn webhook_urls_are_http() {
    assert_valid(&with(|c| {
        c.applications[1].channels.webhook_url = Some("http://localhost:9000/hook".into())
    }));
    assert_error(
        &with(|c| c.applications[1].channels.webhook_url = Some("ftp://x".into())),
        "applications[1].webhook_url",
        "http:// or https://",
    );
    assert_error(
        &with(|c| c.launch_settings[4].channels.webhook_url = Some("hooks.example.org".into())),
        "launch_settings[4].webhook_url",
        "http:// or https://",
    );
}

// ---- schedule groups ----

#[test]
fn stream_launch_settings_cannot_be_members() {
    assert_valid(&with(|c| {
        let mut ls = scheduled("billing.invoice-export.3", "billing", "invoice-export");
        ls.parameters.insert("org_id".into(), json!("initech"));
        c.launch_settings.push(ls);
        c.schedule_groups[0]
            .members
            .push("billing.invoice-export.3".into());
    }));
    assert_error(
        &with(|c| {
            c.schedule_groups[1]
                .members
                .push("billing.invoice-export.stream".into())
        }),
        "schedule_groups[1].members[1]",
        "launch setting 'billing.invoice-export.stream' is a stream",
    );
}

#[test]
fn members_share_the_group_application() {
    assert_valid(&with(crm_sync_standalone));
    assert_error(
        &with(|c| {
            c.launch_settings[4].kind = LaunchKind::Scheduled;
            c.schedule_groups[1].members.push("crm.sync.1".into());
        }),
        "schedule_groups[1].members[1]",
        "launch setting 'crm.sync.1' belongs to application 'crm', not 'billing'",
    );
}

#[test]
fn members_share_one_concurrency_mode() {
    let add_reconcile_to_nightly = |c: &mut Catalog| {
        c.schedule_groups[0]
            .members
            .push("billing.reconcile.hourly".into())
    };
    assert_valid(&with(|c| {
        add_reconcile_to_nightly(c);
        c.agents[2].concurrency = Concurrency::Any;
    }));
    assert_error(
        &with(add_reconcile_to_nightly),
        "schedule_groups[0].members",
        "members must share one concurrency mode: the first member 'billing.invoice-export.nightly' \
         runs ANY, but 'billing.reconcile.hourly' runs MANY",
    );
}

#[test]
fn a_launch_setting_is_at_most_once_in_a_group() {
    // Being in two groups is fine; twice in one is not.
    assert_valid(&with(|c| {
        c.agents[2].concurrency = Concurrency::Any;
        c.schedule_groups[0]
            .members
            .push("billing.reconcile.hourly".into());
    }));
    assert_error(
        &with(|c| {
            c.schedule_groups[1]
                .members
                .push("billing.reconcile.hourly".into())
        }),
        "schedule_groups[1].members[1]",
        "launch setting 'billing.reconcile.hourly' is already a member at members[0]",
    );
}

#[test]
fn cron_and_time_zone_are_valid() {
    assert_valid(&with(|c| {
        c.schedule_groups[0].cron = "0 30 6 ? * MON-FRI".into();
        c.schedule_groups[0].time_zone = "America/New_York".into();
    }));
    assert_error(
        &with(|c| c.schedule_groups[0].cron = "61 2 * * *".into()),
        "schedule_groups[0].cron",
        "`61 2 * * *`: minute must be 0–59, got 61",
    );
    assert_error(
        &with(|c| c.schedule_groups[0].cron = "* * *".into()),
        "schedule_groups[0].cron",
        "expected 5 or 6 fields, found 3",
    );
    assert_error(
        &with(|c| c.schedule_groups[0].time_zone = "Mars/Base".into()),
        "schedule_groups[0].time_zone",
        "unknown time zone 'Mars/Base'; use an IANA name such as Europe/Paris",
    );
}
