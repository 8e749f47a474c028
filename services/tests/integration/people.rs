//! Managing people: roles, disabling, password resets and one's own password, with the last
//! active admin kept and a disabled user signed out at once.

use super::actor;
use crate::on_both_backends;
use am_domain::roles::Role;
use am_services::{
    ServiceError, Services, Settings,
    accounts::{
        self,
        people::{self, UserChange},
    },
    health::BrokerStatus,
};
use sea_orm::DatabaseConnection;

on_both_backends!(
    roles_change_and_the_last_active_admin_is_kept,
    a_disabled_user_is_signed_out_and_their_tokens_stop_at_once,
    passwords_are_reset_by_admins_and_changed_by_their_owner,
);

const PW: &str = "correct horse battery";

fn change(f: impl FnOnce(&mut UserChange)) -> UserChange {
    let mut c = UserChange::default();
    f(&mut c);
    c
}

async fn roles_change_and_the_last_active_admin_is_kept(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    accounts::create_user(db, &admin, "ada", PW, Role::Admin)
        .await
        .expect("ada");
    accounts::create_user(db, &admin, "bob", PW, Role::Viewer)
        .await
        .expect("bob");
    // Viewers and operators manage nobody.
    assert!(matches!(
        people::update_user(
            db,
            &actor(Role::Operator),
            "bob",
            change(|c| c.role = Some(Role::Admin))
        )
        .await,
        Err(ServiceError::Forbidden { .. })
    ));
    let bob = people::update_user(db, &admin, "bob", change(|c| c.role = Some(Role::Operator)))
        .await
        .expect("bob becomes an operator");
    assert_eq!(bob.role, Role::Operator);
    // Ada is the only admin: she can be neither demoted nor disabled ...
    for c in [
        change(|c| c.role = Some(Role::Viewer)),
        change(|c| c.disabled = Some(true)),
    ] {
        let refused = people::update_user(db, &admin, "ada", c).await;
        assert!(
            matches!(&refused, Err(ServiceError::Conflict(m)) if m.contains("last active admin")),
            "{refused:?}"
        );
    }
    // ... until bob is an admin too; then a disabled admin does not count.
    people::update_user(db, &admin, "bob", change(|c| c.role = Some(Role::Admin)))
        .await
        .expect("bob becomes an admin");
    people::update_user(db, &admin, "ada", change(|c| c.disabled = Some(true)))
        .await
        .expect("ada disabled");
    assert!(matches!(
        people::update_user(db, &admin, "bob", change(|c| c.role = Some(Role::Viewer))).await,
        Err(ServiceError::Conflict(_))
    ));
    assert!(matches!(
        people::update_user(db, &admin, "nobody", change(|c| c.disabled = Some(true))).await,
        Err(ServiceError::NotFound(_))
    ));
    let listed = accounts::list_users(db, &admin).await.expect("lists");
    let seen: Vec<(&str, Role, bool)> = listed
        .iter()
        .map(|u| (u.name.as_str(), u.role, u.disabled))
        .collect();
    assert_eq!(
        seen,
        [("ada", Role::Admin, true), ("bob", Role::Admin, false)]
    );
}

async fn a_disabled_user_is_signed_out_and_their_tokens_stop_at_once(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    accounts::create_user(db, &admin, "carl", PW, Role::Operator)
        .await
        .expect("carl");
    let s = Services::new(db.clone(), BrokerStatus::default(), Settings::default());
    let carl = accounts::authenticate(&s, "carl", PW, "10.0.0.1")
        .await
        .expect("login");
    let session = accounts::create_session(&s, &carl, None)
        .await
        .expect("session");
    let token = accounts::create_token(db, &admin, "carl", "ci")
        .await
        .expect("token");
    assert!(
        accounts::resolve_session(&s, &session)
            .await
            .expect("reads")
            .is_some()
    );
    assert!(
        accounts::resolve_token(db, &token, "")
            .await
            .expect("reads")
            .is_some()
    );
    people::update_user(db, &admin, "carl", change(|c| c.disabled = Some(true)))
        .await
        .expect("disabled");
    assert!(
        accounts::resolve_session(&s, &session)
            .await
            .expect("reads")
            .is_none()
    );
    assert!(
        accounts::resolve_token(db, &token, "")
            .await
            .expect("reads")
            .is_none()
    );
    assert!(
        accounts::authenticate(&s, "carl", PW, "10.0.0.1")
            .await
            .is_err()
    );
    // Enabled again, the token works again; the session was deleted for good.
    people::update_user(db, &admin, "carl", change(|c| c.disabled = Some(false)))
        .await
        .expect("enabled");
    assert!(
        accounts::resolve_token(db, &token, "")
            .await
            .expect("reads")
            .is_some()
    );
    assert!(
        accounts::resolve_session(&s, &session)
            .await
            .expect("reads")
            .is_none()
    );
}

async fn passwords_are_reset_by_admins_and_changed_by_their_owner(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    accounts::create_user(db, &admin, "dora", PW, Role::Viewer)
        .await
        .expect("dora");
    let s = Services::new(db.clone(), BrokerStatus::default(), Settings::default());
    let generated = people::reset_password(db, &admin, "dora")
        .await
        .expect("reset");
    assert!(generated.len() >= accounts::MIN_PASSWORD);
    assert!(
        accounts::authenticate(&s, "dora", PW, "10.0.0.2")
            .await
            .is_err()
    );
    let dora = accounts::authenticate(&s, "dora", &generated, "10.0.0.2")
        .await
        .expect("the generated password works");

    // Her own change needs the current password and meets the policy.
    let wrong =
        people::change_own_password(&s, &dora, "not it at all", "a brand new secret", None).await;
    assert!(
        matches!(&wrong, Err(ServiceError::Invalid(e)) if e.0[0].path == "current_password"),
        "{wrong:?}"
    );
    let traced = am_services::audit::list(
        db,
        &admin,
        &am_domain::read::audit::AuditFilter {
            action: Some("change_password_failed".into()),
            ..Default::default()
        },
        None,
        10,
    )
    .await
    .expect("audit");
    assert_eq!(
        traced.entries.len(),
        1,
        "a wrong current password is audited"
    );
    assert_eq!(traced.entries[0].actor, "dora");
    for weak in ["too short", "dora"] {
        let refused = people::change_own_password(&s, &dora, &generated, weak, None).await;
        assert!(
            matches!(&refused, Err(ServiceError::Invalid(e)) if e.0[0].path == "password"),
            "{refused:?}"
        );
    }
    people::change_own_password(&s, &dora, &generated, "a brand new secret", None)
        .await
        .expect("changed");
    accounts::authenticate(&s, "dora", "a brand new secret", "10.0.0.2")
        .await
        .expect("the new password works");
    // An admin sets one; the policy applies there too.
    assert!(matches!(
        people::update_user(
            db,
            &admin,
            "dora",
            change(|c| c.password = Some("short".into()))
        )
        .await,
        Err(ServiceError::Invalid(_))
    ));
    people::update_user(db, &admin, "dora", change(|c| c.password = Some(PW.into())))
        .await
        .expect("set");
    accounts::authenticate(&s, "dora", PW, "10.0.0.2")
        .await
        .expect("the admin's password works");
}
