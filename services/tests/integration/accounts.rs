use super::actor;
use crate::on_both_backends;
use am_domain::roles::Role;
use am_services::{ServiceError, Services, Settings, accounts, health::BrokerStatus};
use sea_orm::DatabaseConnection;

fn services(db: &DatabaseConnection) -> Services {
    Services::new(db.clone(), BrokerStatus::default(), Settings::default())
}

on_both_backends!(
    first_admin_is_created_once,
    passwords_sessions_and_tokens,
    failed_logins_are_rate_limited,
    parallel_guesses_do_not_outrun_the_limit,
    user_names_and_passwords_are_checked,
);

async fn first_admin_is_created_once(db: &DatabaseConnection) {
    let generated = accounts::ensure_first_admin(db, None)
        .await
        .expect("first admin")
        .expect("generated password");
    assert!(generated.len() >= 16);
    assert_eq!(
        accounts::ensure_first_admin(db, Some("another-password"))
            .await
            .expect("second"),
        None
    );
    let s = services(db);
    let p = accounts::authenticate(&s, "admin", &generated, "127.0.0.1")
        .await
        .expect("login");
    assert_eq!(p.role, Role::Admin);
}

async fn passwords_sessions_and_tokens(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    accounts::create_user(db, &admin, "vera", "correct horse", Role::Viewer)
        .await
        .expect("user");
    assert!(matches!(
        accounts::create_user(db, &admin, "vera", "correct horse", Role::Viewer).await,
        Err(ServiceError::Conflict(_))
    ));
    let s = services(db);
    assert!(matches!(
        accounts::authenticate(&s, "vera", "wrong horse", "10.0.0.1").await,
        Err(ServiceError::BadCredentials)
    ));
    assert!(matches!(
        accounts::authenticate(&s, "nobody", "whatever1", "10.0.0.1").await,
        Err(ServiceError::BadCredentials)
    ));
    let p = accounts::authenticate(&s, "vera", "correct horse", "10.0.0.1")
        .await
        .expect("login");
    assert_eq!(p.role, Role::Viewer);

    let secret = accounts::create_session(&s, &p, None)
        .await
        .expect("session");
    let back = accounts::resolve_session(&s, &secret)
        .await
        .expect("resolve")
        .expect("valid");
    assert_eq!(back.name, "vera");
    assert_eq!(
        accounts::resolve_session(&s, "forged")
            .await
            .expect("resolve"),
        None
    );
    accounts::delete_session(db, &secret).await.expect("logout");
    assert_eq!(
        accounts::resolve_session(&s, &secret)
            .await
            .expect("resolve"),
        None
    );

    // Only admins create tokens; a token acts with its user's role.
    assert!(matches!(
        accounts::create_token(db, &actor(Role::Operator), "vera", "ci").await,
        Err(ServiceError::Forbidden { .. })
    ));
    let token = accounts::create_token(db, &admin, "vera", "ci")
        .await
        .expect("token");
    assert!(token.starts_with(accounts::TOKEN_PREFIX));
    let tp = accounts::resolve_token(db, &token, "")
        .await
        .expect("resolve")
        .expect("valid");
    assert_eq!((tp.name.as_str(), tp.role), ("vera", Role::Viewer));
    assert_eq!(
        accounts::resolve_token(db, "amt_forged", "")
            .await
            .expect("resolve"),
        None
    );
    assert_eq!(
        accounts::resolve_token(db, "garbage", "")
            .await
            .expect("resolve"),
        None
    );
}

async fn failed_logins_are_rate_limited(db: &DatabaseConnection) {
    accounts::create_user(
        db,
        &actor(Role::Admin),
        "mallory",
        "right password",
        Role::Operator,
    )
    .await
    .expect("user");
    let s = services(db);
    for _ in 0..5 {
        assert!(matches!(
            accounts::authenticate(&s, "mallory", "guess", "10.0.0.9").await,
            Err(ServiceError::BadCredentials)
        ));
    }
    // Locked out now from that address, even with the right password …
    assert!(matches!(
        accounts::authenticate(&s, "mallory", "right password", "10.0.0.9").await,
        Err(ServiceError::RateLimited { .. })
    ));
    // … but not from another one: nobody can lock a person out by guessing wrong.
    let p = accounts::authenticate(&s, "mallory", "right password", "10.0.0.10")
        .await
        .expect("the right password from an address that did not fail");
    assert_eq!(p.name, "mallory");
}

/// Regression: the attempt used to be counted only after the ~30 ms hash check, so 20 guesses
/// sent at once all got a verdict. Each is now reserved before the check.
async fn parallel_guesses_do_not_outrun_the_limit(db: &DatabaseConnection) {
    accounts::create_user(
        db,
        &actor(Role::Admin),
        "mallory",
        "right password",
        Role::Operator,
    )
    .await
    .expect("user");
    let s = services(db);
    let mut guesses = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let s = s.clone();
        guesses
            .spawn(async move { accounts::authenticate(&s, "mallory", "guess", "10.0.1.1").await });
    }
    let results = guesses.join_all().await;
    let verdicts = results
        .iter()
        .filter(|r| matches!(r, Err(ServiceError::BadCredentials)))
        .count();
    let limited = results
        .iter()
        .filter(|r| matches!(r, Err(ServiceError::RateLimited { .. })))
        .count();
    assert_eq!((verdicts, limited), (5, 15), "{results:?}");
    // Another address, guessing at the same moment, is neither refused nor the cause of a
    // refusal elsewhere.
    assert!(matches!(
        accounts::authenticate(&s, "mallory", "guess", "10.0.2.1").await,
        Err(ServiceError::BadCredentials)
    ));
    accounts::authenticate(&s, "mallory", "right password", "10.0.3.1")
        .await
        .expect("an address that did not fail");
}

async fn user_names_and_passwords_are_checked(db: &DatabaseConnection) {
    let admin = actor(Role::Admin);
    let Err(ServiceError::Invalid(e)) =
        accounts::create_user(db, &admin, "bad name!", "long enough pw", Role::Viewer).await
    else {
        panic!("bad name accepted")
    };
    assert_eq!(e.0[0].path, "name");
    let Err(ServiceError::Invalid(e)) =
        accounts::create_user(db, &admin, "ok", "short", Role::Viewer).await
    else {
        panic!("short password accepted")
    };
    assert_eq!(e.0[0].path, "password");
    // 11 characters, and a password that is the user name, are refused.
    for (name, password) in [("ok", "eleven char"), ("operator-jane", "Operator-Jane")] {
        let Err(ServiceError::Invalid(e)) =
            accounts::create_user(db, &admin, name, password, Role::Viewer).await
        else {
            panic!("{password:?} accepted for {name}")
        };
        assert_eq!(e.0[0].path, "password");
    }
    assert!(matches!(
        accounts::create_user(
            db,
            &actor(Role::Operator),
            "ok",
            "long enough pw",
            Role::Viewer
        )
        .await,
        Err(ServiceError::Forbidden { .. })
    ));
}
