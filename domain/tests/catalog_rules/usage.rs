//! Entity paths and the usages that block deletes.

use super::*;

// ---- entity paths and usages ----

#[test]
fn entity_paths() {
    let c = fixture();
    assert_eq!(
        entity_path(&c, &EntityRef::LaunchSetting("crm.sync.1".into())).as_deref(),
        Some("launch_settings[4]")
    );
    assert_eq!(
        entity_path(&c, &EntityRef::agent("billing", "reconcile")).as_deref(),
        Some("agents[2]")
    );
    assert_eq!(
        entity_path(&c, &EntityRef::classifier("billing", "organisations")).as_deref(),
        Some("classifiers[0]")
    );
    assert_eq!(
        entity_path(&c, &EntityRef::Pool("p2".into())).as_deref(),
        Some("pools[1]")
    );
    assert_eq!(entity_path(&c, &EntityRef::agent("crm", "reconcile")), None);
}

#[test]
fn usages_name_every_user() {
    let c = fixture();
    assert_eq!(
        usages(&c, &EntityRef::agent("billing", "invoice-export")),
        [
            "launch setting 'billing.invoice-export.stream' uses agent 'billing/invoice-export'",
            "launch setting 'billing.invoice-export.nightly' uses agent 'billing/invoice-export'",
        ]
    );
    assert_eq!(
        usages(&c, &EntityRef::Pool("p1".into())),
        [
            "application 'billing' uses pool 'p1' as its default pool",
            "launch setting 'billing.invoice-export.nightly' uses pool 'p1'",
        ]
    );
    assert_eq!(
        usages(
            &c,
            &EntityRef::LaunchSetting("billing.cleanup.nightly".into())
        ),
        ["schedule group 'nightly' has launch setting 'billing.cleanup.nightly' as a member"]
    );
    assert_eq!(
        usages(&c, &EntityRef::classifier("billing", "organisations")),
        [
            "agent 'billing/invoice-export' parameter 'org_id' uses classifier 'billing/organisations'",
            "agent 'billing/invoice-export' parameter 'orgs' uses classifier 'billing/organisations'",
        ]
    );
    assert_eq!(
        usages(&c, &EntityRef::DataQueue("invoices".into())),
        ["agent 'crm/sync' uses data queue 'invoices'"]
    );
    assert_eq!(
        usages(&c, &EntityRef::Application("crm".into())),
        [
            "agent 'crm/sync' belongs to application 'crm'",
            "launch setting 'crm.sync.1' belongs to application 'crm'",
        ]
    );
    assert_eq!(
        usages(&c, &EntityRef::Application("billing".into())).len(),
        3 + 1 + 4 + 2
    );
    assert!(usages(&c, &EntityRef::ScheduleGroup("nightly".into())).is_empty());
    assert!(usages(&c, &EntityRef::Pool("unused".into())).is_empty());
}

#[test]
fn entity_refs_display_their_key() {
    assert_eq!(
        EntityRef::agent("billing", "invoice-export").to_string(),
        "agent 'billing/invoice-export'"
    );
    assert_eq!(
        EntityRef::DataQueue("q".into()).to_string(),
        "data queue 'q'"
    );
    assert_eq!(
        EntityRef::ScheduleGroup("g".into()).to_string(),
        "schedule group 'g'"
    );
}

/// Lookups find every entity whether the lists are sorted (as stored) or in document order.
#[test]
fn lookups_find_entities_in_any_order() {
    let mut c = fixture();
    c.normalize();
    let mut reversed = c.clone();
    reversed.applications.reverse();
    reversed.agents.reverse();
    reversed.launch_settings.reverse();
    for catalog in [&c, &reversed] {
        for a in &c.applications {
            assert!(catalog.application(&a.id).is_some(), "{}", a.id);
        }
        for a in &c.agents {
            assert!(catalog.agent(&a.application, &a.id).is_some(), "{}", a.id);
        }
        for l in &c.launch_settings {
            assert_eq!(catalog.launch_setting(&l.id).map(|x| &x.id), Some(&l.id));
        }
        assert!(catalog.application("nope").is_none());
        assert!(catalog.agent("billing", "nope").is_none());
    }
}
