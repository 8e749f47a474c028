//! Accounts: users, API tokens for automation and browser sessions.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{big_integer, big_pk_auto, boolean, string};

use crate::util::{drop, foreign_key, index, table, ts, ts_null, unique};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                table(Users::Table)
                    .col(big_pk_auto(Users::Id))
                    .col(string(Users::Name))
                    .col(string(Users::PasswordHash))
                    .col(string(Users::Role))
                    .col(boolean(Users::Disabled).default(false))
                    .col(ts(Users::CreatedAt))
                    .col(ts_null(Users::LastLoginAt))
                    .index(&mut unique("uq_users_name", [Users::Name]))
                    .take(),
            )
            .await?;

        use ApiTokens as T;
        manager
            .create_table(
                table(T::Table)
                    .col(big_pk_auto(T::Id))
                    .col(big_integer(T::UserId))
                    .col(string(T::Name))
                    .col(string(T::TokenHash))
                    .col(string(T::Prefix))
                    .col(ts(T::CreatedAt))
                    .col(ts_null(T::LastUsedAt))
                    .col(ts_null(T::ExpiresAt))
                    .col(ts_null(T::RevokedAt))
                    .index(&mut unique("uq_api_tokens_token_hash", [T::TokenHash]))
                    .foreign_key(&mut foreign_key(
                        "fk_api_tokens_user_id",
                        (T::Table, T::UserId),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index("idx_api_tokens_user_id", T::Table, [T::UserId]))
            .await?;

        use Sessions as S;
        manager
            .create_table(
                table(S::Table)
                    .col(string(S::Id).primary_key())
                    .col(big_integer(S::UserId))
                    .col(ts(S::CreatedAt))
                    .col(ts(S::ExpiresAt))
                    .col(ts(S::LastSeenAt))
                    .foreign_key(&mut foreign_key(
                        "fk_sessions_user_id",
                        (S::Table, S::UserId),
                        (Users::Table, Users::Id),
                        ForeignKeyAction::Cascade,
                    ))
                    .take(),
            )
            .await?;
        manager
            .create_index(index("idx_sessions_expires_at", S::Table, [S::ExpiresAt]))
            .await?;
        manager
            .create_index(index("idx_sessions_user_id", S::Table, [S::UserId]))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(drop(Sessions::Table)).await?;
        manager.drop_table(drop(ApiTokens::Table)).await?;
        manager.drop_table(drop(Users::Table)).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

#[derive(DeriveIden)]
pub enum Users {
    Table,
    Id,
    Name,
    PasswordHash,
    Role,
    Disabled,
    CreatedAt,
    LastLoginAt,
}

#[derive(DeriveIden)]
pub enum ApiTokens {
    Table,
    Id,
    UserId,
    Name,
    TokenHash,
    Prefix,
    CreatedAt,
    LastUsedAt,
    ExpiresAt,
    RevokedAt,
}

#[derive(DeriveIden)]
pub enum Sessions {
    Table,
    Id,
    UserId,
    CreatedAt,
    ExpiresAt,
    LastSeenAt,
}
