//! API tokens: one's own or (admins) anyone's, a role at most the user's and the creator's, an
//! expiry, revocation, and where each was last used.

use super::actor;
use crate::on_both_backends;
use am_domain::{read::accounts::NewToken, roles::Role};
use am_services::{
    ServiceError,
    accounts::{self, Principal, tokens},
    entity::api_tokens,
};
use chrono::Utc;
use sea_orm::{ActiveModelTrait, DatabaseConnection, EntityTrait, Set};

on_both_backends!(tokens_carry_at_most_their_users_role_and_stop_when_revoked_or_expired);

fn new(name: &str, role: Option<Role>) -> NewToken {
    NewToken {
        user: None,
        name: name.into(),
        role,
        expires_at: None,
    }
}

async fn tokens_carry_at_most_their_users_role_and_stop_when_revoked_or_expired(
    db: &DatabaseConnection,
) {
    let admin = actor(Role::Admin);
    let pw = "correct horse battery";
    let olga = accounts::create_user(db, &admin, "olga", pw, Role::Operator)
        .await
        .expect("olga");
    accounts::create_user(db, &admin, "vic", pw, Role::Viewer)
        .await
        .expect("vic");
    let olga = Principal {
        user_id: olga.id,
        name: "olga".into(),
        role: Role::Operator,
        via: accounts::AuthMethod::Session,
        address: None,
    };

    // Her own viewer token for a scraper: it acts as a viewer, and records where it was used.
    let scraper = tokens::create(db, &olga, new("grafana", Some(Role::Viewer)))
        .await
        .expect("created");
    assert!(scraper.token.starts_with(accounts::TOKEN_PREFIX));
    let p = accounts::resolve_token(db, &scraper.token, "10.9.8.7")
        .await
        .expect("reads")
        .expect("valid");
    assert_eq!((p.name.as_str(), p.role), ("olga", Role::Viewer));
    // Not above her own role, not for someone else, not already expired, not unnamed.
    for (bad, field) in [
        (new("root", Some(Role::Admin)), "role"),
        (
            NewToken {
                expires_at: Some(Utc::now() - chrono::Duration::hours(1)),
                ..new("late", None)
            },
            "expires_at",
        ),
        (new("  ", None), "name"),
    ] {
        let refused = tokens::create(db, &olga, bad).await;
        assert!(
            matches!(&refused, Err(ServiceError::Invalid(e)) if e.0[0].path == field),
            "{refused:?}"
        );
    }
    assert!(matches!(
        tokens::create(
            db,
            &olga,
            NewToken {
                user: Some("vic".into()),
                ..new("x", None)
            }
        )
        .await,
        Err(ServiceError::Forbidden { .. })
    ));
    // An admin's token for a viewer cannot outrank the viewer.
    assert!(matches!(
        tokens::create(
            db,
            &admin,
            NewToken {
                user: Some("vic".into()),
                ..new("x", Some(Role::Operator))
            }
        )
        .await,
        Err(ServiceError::Invalid(_))
    ));
    let vics = tokens::create(
        db,
        &admin,
        NewToken {
            user: Some("vic".into()),
            ..new("ci", None)
        },
    )
    .await
    .expect("for vic");

    // Lists: her own; everyone's for admins, never with the secret.
    let own = tokens::list(db, &olga, false).await.expect("own");
    assert_eq!(own.len(), 1);
    assert_eq!(own[0].last_used_from.as_deref(), Some("10.9.8.7"));
    assert!(own[0].last_used_at.is_some());
    assert!(matches!(
        tokens::list(db, &olga, true).await,
        Err(ServiceError::Forbidden { .. })
    ));
    let everyone = tokens::list(db, &admin, true).await.expect("all");
    assert_eq!(everyone.len(), 2);
    assert!(
        !serde_json::to_string(&everyone)
            .expect("json")
            .contains(&scraper.token)
    );

    // Someone else's token is not hers to revoke (nor to know of); her own stops at once.
    assert!(matches!(
        tokens::revoke(db, &olga, vics.info.id).await,
        Err(ServiceError::NotFound(_))
    ));
    let revoked = tokens::revoke(db, &olga, scraper.info.id)
        .await
        .expect("revoked");
    assert!(revoked.revoked_at.is_some());
    assert!(
        accounts::resolve_token(db, &scraper.token, "")
            .await
            .expect("reads")
            .is_none()
    );
    tokens::revoke(db, &olga, scraper.info.id)
        .await
        .expect("again: no change");

    // An expired token stops too.
    assert!(
        accounts::resolve_token(db, &vics.token, "")
            .await
            .expect("reads")
            .is_some()
    );
    let mut row: api_tokens::ActiveModel = api_tokens::Entity::find_by_id(vics.info.id)
        .one(db)
        .await
        .expect("reads")
        .expect("row")
        .into();
    row.expires_at = Set(Some(Utc::now() - chrono::Duration::seconds(1)));
    row.update(db).await.expect("expired");
    assert!(
        accounts::resolve_token(db, &vics.token, "")
            .await
            .expect("reads")
            .is_none()
    );
}
