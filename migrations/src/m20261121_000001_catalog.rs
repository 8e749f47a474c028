//! The catalog: what operators define (applications, hosts, pools, data queues, agents,
//! classifiers, launch settings, schedule groups) and the revision row that serializes writers.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{
    big_integer, big_integer_null, boolean, double, integer, integer_null, json, json_null, string,
    string_null, text_null, uuid_null,
};

use crate::util::{drop, foreign_key, index, primary_key, table, ts, ts_null, unique};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_meta(manager).await?;
        create_topology(manager).await?;
        create_agents(manager).await?;
        create_launch_settings(manager).await?;
        create_schedule_groups(manager).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(drop(ScheduleGroupMembers::Table))
            .await?;
        manager.drop_table(drop(ScheduleGroups::Table)).await?;
        manager.drop_table(drop(LaunchSettings::Table)).await?;
        manager.drop_table(drop(ClassifierValues::Table)).await?;
        manager.drop_table(drop(Classifiers::Table)).await?;
        manager.drop_table(drop(Agents::Table)).await?;
        manager.drop_table(drop(DataQueues::Table)).await?;
        manager.drop_table(drop(PoolHosts::Table)).await?;
        manager.drop_table(drop(Pools::Table)).await?;
        manager.drop_table(drop(Hosts::Table)).await?;
        manager.drop_table(drop(Applications::Table)).await?;
        manager.drop_table(drop(CatalogMeta::Table)).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

/// `catalog_meta` with its single row (id 1, revision 0).
async fn create_meta(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            table(CatalogMeta::Table)
                .col(integer(CatalogMeta::Id).primary_key())
                .col(big_integer(CatalogMeta::Revision))
                .take(),
        )
        .await?;
    manager
        .exec_stmt(
            Query::insert()
                .into_table(CatalogMeta::Table)
                .columns([CatalogMeta::Id, CatalogMeta::Revision])
                .values_panic([1.into(), 0i64.into()])
                .take(),
        )
        .await
}

/// Applications, hosts, pools and data queues.
async fn create_topology(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            table(Applications::Table)
                .col(string(Applications::Id).primary_key())
                .col(string(Applications::Title).default(""))
                .col(string(Applications::DefaultPoolId))
                .col(text_null(Applications::WebhookUrl))
                .col(ts(Applications::CreatedAt))
                .col(ts(Applications::UpdatedAt))
                .take(),
        )
        .await?;

    manager
        .create_table(
            table(Hosts::Table)
                .col(string(Hosts::Name).primary_key())
                .col(ts(Hosts::CreatedAt))
                .take(),
        )
        .await?;

    manager
        .create_table(
            table(Pools::Table)
                .col(string(Pools::Id).primary_key())
                .col(string(Pools::Title).default(""))
                .col(ts(Pools::CreatedAt))
                .col(ts(Pools::UpdatedAt))
                .take(),
        )
        .await?;

    manager
        .create_table(
            table(PoolHosts::Table)
                .col(string(PoolHosts::PoolId))
                .col(string(PoolHosts::HostName))
                .primary_key(&mut primary_key(
                    "pk_pool_hosts",
                    [PoolHosts::PoolId, PoolHosts::HostName],
                ))
                .foreign_key(&mut foreign_key(
                    "fk_pool_hosts_pool_id",
                    (PoolHosts::Table, PoolHosts::PoolId),
                    (Pools::Table, Pools::Id),
                    ForeignKeyAction::Cascade,
                ))
                .foreign_key(&mut foreign_key(
                    "fk_pool_hosts_host_name",
                    (PoolHosts::Table, PoolHosts::HostName),
                    (Hosts::Table, Hosts::Name),
                    ForeignKeyAction::NoAction,
                ))
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            "idx_pool_hosts_host_name",
            PoolHosts::Table,
            [PoolHosts::HostName],
        ))
        .await?;

    manager
        .create_table(
            table(DataQueues::Table)
                .col(string(DataQueues::Id).primary_key())
                .col(string(DataQueues::Title).default(""))
                .col(string(DataQueues::Kind))
                .col(string_null(DataQueues::Address))
                .col(big_integer_null(DataQueues::DelayMs))
                .col(ts(DataQueues::CreatedAt))
                .col(ts(DataQueues::UpdatedAt))
                .take(),
        )
        .await
}

/// Agents, classifiers and classifier values.
async fn create_agents(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .create_table(
            table(Agents::Table)
                .col(string(Agents::ApplicationId))
                .col(string(Agents::Id))
                .col(string(Agents::Title).default(""))
                .col(string(Agents::InputKind))
                .col(string_null(Agents::DataQueueId))
                .col(string(Agents::Concurrency))
                .col(string(Agents::OverlapPolicy))
                .col(json(Agents::ParameterSchema))
                .col(json_null(Agents::SuggestedDefaults))
                .col(string(Agents::DeclaredBy))
                .col(ts_null(Agents::PublishedAt))
                .col(string_null(Agents::PublishedByHost))
                .col(string_null(Agents::PublishedVersion))
                .col(json_null(Agents::PublishedSchema))
                .col(ts(Agents::CreatedAt))
                .col(ts(Agents::UpdatedAt))
                .primary_key(&mut primary_key(
                    "pk_agents",
                    [Agents::ApplicationId, Agents::Id],
                ))
                .foreign_key(&mut foreign_key(
                    "fk_agents_application_id",
                    (Agents::Table, Agents::ApplicationId),
                    (Applications::Table, Applications::Id),
                    ForeignKeyAction::NoAction,
                ))
                .foreign_key(&mut foreign_key(
                    "fk_agents_data_queue_id",
                    (Agents::Table, Agents::DataQueueId),
                    (DataQueues::Table, DataQueues::Id),
                    ForeignKeyAction::NoAction,
                ))
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            "idx_agents_data_queue_id",
            Agents::Table,
            [Agents::DataQueueId],
        ))
        .await?;

    manager
        .create_table(
            table(Classifiers::Table)
                .col(string(Classifiers::ApplicationId))
                .col(string(Classifiers::Name))
                .col(string(Classifiers::Title).default(""))
                .col(ts_null(Classifiers::PublishedAt))
                .col(ts(Classifiers::UpdatedAt))
                .primary_key(&mut primary_key(
                    "pk_classifiers",
                    [Classifiers::ApplicationId, Classifiers::Name],
                ))
                .foreign_key(&mut foreign_key(
                    "fk_classifiers_application_id",
                    (Classifiers::Table, Classifiers::ApplicationId),
                    (Applications::Table, Applications::Id),
                    ForeignKeyAction::Cascade,
                ))
                .take(),
        )
        .await?;

    manager
        .create_table(
            table(ClassifierValues::Table)
                .col(string(ClassifierValues::ApplicationId))
                .col(string(ClassifierValues::ClassifierName))
                .col(string(ClassifierValues::Code))
                .col(string(ClassifierValues::Label))
                .col(integer(ClassifierValues::Position))
                .primary_key(&mut primary_key(
                    "pk_classifier_values",
                    [
                        ClassifierValues::ApplicationId,
                        ClassifierValues::ClassifierName,
                        ClassifierValues::Code,
                    ],
                ))
                .foreign_key(&mut foreign_key(
                    "fk_classifier_values_classifier",
                    (
                        ClassifierValues::Table,
                        (
                            ClassifierValues::ApplicationId,
                            ClassifierValues::ClassifierName,
                        ),
                    ),
                    (
                        Classifiers::Table,
                        (Classifiers::ApplicationId, Classifiers::Name),
                    ),
                    ForeignKeyAction::Cascade,
                ))
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            "idx_classifier_values_label",
            ClassifierValues::Table,
            [
                ClassifierValues::ApplicationId,
                ClassifierValues::ClassifierName,
                ClassifierValues::Label,
            ],
        ))
        .await
}

/// Launch settings.
async fn create_launch_settings(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    use LaunchSettings as Ls;
    manager
        .create_table(
            table(Ls::Table)
                .col(string(Ls::Id).primary_key())
                .col(string(Ls::Title).default(""))
                .col(string(Ls::ApplicationId))
                .col(string(Ls::AgentId))
                .col(string(Ls::Kind))
                .col(boolean(Ls::Enabled))
                .col(string_null(Ls::PoolId))
                .col(json(Ls::Parameters))
                .col(string_null(Ls::StreamMode))
                .col(json_null(Ls::MessageFilter))
                .col(integer(Ls::FailureThreshold))
                .col(big_integer(Ls::RetryInitialDelayMs))
                .col(double(Ls::RetryMultiplier))
                .col(big_integer(Ls::RetryMaxDelayMs))
                .col(integer(Ls::MaxDeliveries))
                .col(string(Ls::DeadLetterPolicy))
                .col(big_integer(Ls::ParkCooldownMs))
                .col(integer_null(Ls::DeadLetterNotifyThreshold))
                .col(big_integer(Ls::StartTimeoutMs))
                .col(big_integer(Ls::WorkTimeoutMs))
                .col(big_integer_null(Ls::MaxRunTimeMs))
                .col(string(Ls::OnLost))
                .col(big_integer_null(Ls::IdleTimeoutMs))
                .col(text_null(Ls::WebhookUrl))
                .col(string(Ls::CurrentStatus).default("waiting"))
                .col(string_null(Ls::LastResult))
                .col(ts_null(Ls::LastResultAt))
                .col(uuid_null(Ls::LastActivationId))
                .col(text_null(Ls::DisabledReason))
                .col(ts_null(Ls::DisabledAt))
                .col(ts(Ls::CreatedAt))
                .col(ts(Ls::UpdatedAt))
                .foreign_key(&mut foreign_key(
                    "fk_launch_settings_agent",
                    (Ls::Table, (Ls::ApplicationId, Ls::AgentId)),
                    (Agents::Table, (Agents::ApplicationId, Agents::Id)),
                    ForeignKeyAction::NoAction,
                ))
                .foreign_key(&mut foreign_key(
                    "fk_launch_settings_pool_id",
                    (Ls::Table, Ls::PoolId),
                    (Pools::Table, Pools::Id),
                    ForeignKeyAction::NoAction,
                ))
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            "idx_launch_settings_agent",
            Ls::Table,
            [Ls::ApplicationId, Ls::AgentId],
        ))
        .await?;
    manager
        .create_index(index(
            "idx_launch_settings_current_status",
            Ls::Table,
            [Ls::CurrentStatus],
        ))
        .await?;
    manager
        .create_index(index(
            "idx_launch_settings_pool_id",
            Ls::Table,
            [Ls::PoolId],
        ))
        .await
}

/// Schedule groups and their ordered members.
async fn create_schedule_groups(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    use ScheduleGroupMembers as Sgm;
    use ScheduleGroups as Sg;
    manager
        .create_table(
            table(Sg::Table)
                .col(string(Sg::Id).primary_key())
                .col(string(Sg::Title).default(""))
                .col(string(Sg::ApplicationId))
                .col(string(Sg::Cron))
                .col(string(Sg::TimeZone))
                .col(string(Sg::MisfirePolicy))
                .col(boolean(Sg::Enabled))
                .col(string(Sg::CurrentStatus).default("waiting"))
                .col(string_null(Sg::LastResult))
                .col(ts_null(Sg::LastResultAt))
                .col(ts_null(Sg::LastFireAt))
                .col(ts_null(Sg::NextFireAt))
                .col(text_null(Sg::DisabledReason))
                .col(ts(Sg::CreatedAt))
                .col(ts(Sg::UpdatedAt))
                .foreign_key(&mut foreign_key(
                    "fk_schedule_groups_application_id",
                    (Sg::Table, Sg::ApplicationId),
                    (Applications::Table, Applications::Id),
                    ForeignKeyAction::NoAction,
                ))
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            "idx_schedule_groups_next_fire_at",
            Sg::Table,
            [Sg::NextFireAt],
        ))
        .await?;
    manager
        .create_index(index(
            "idx_schedule_groups_application_id",
            Sg::Table,
            [Sg::ApplicationId],
        ))
        .await?;

    manager
        .create_table(
            table(Sgm::Table)
                .col(string(Sgm::GroupId))
                .col(string(Sgm::LaunchSettingId))
                .col(integer(Sgm::Position))
                .primary_key(&mut primary_key(
                    "pk_schedule_group_members",
                    [Sgm::GroupId, Sgm::LaunchSettingId],
                ))
                .index(&mut unique(
                    "uq_schedule_group_members_position",
                    [Sgm::GroupId, Sgm::Position],
                ))
                .foreign_key(&mut foreign_key(
                    "fk_schedule_group_members_group_id",
                    (Sgm::Table, Sgm::GroupId),
                    (Sg::Table, Sg::Id),
                    ForeignKeyAction::Cascade,
                ))
                .foreign_key(&mut foreign_key(
                    "fk_schedule_group_members_launch_setting_id",
                    (Sgm::Table, Sgm::LaunchSettingId),
                    (LaunchSettings::Table, LaunchSettings::Id),
                    ForeignKeyAction::NoAction,
                ))
                .take(),
        )
        .await?;
    manager
        .create_index(index(
            "idx_schedule_group_members_launch_setting_id",
            Sgm::Table,
            [Sgm::LaunchSettingId],
        ))
        .await
}

#[derive(DeriveIden)]
pub enum CatalogMeta {
    Table,
    Id,
    Revision,
}

#[derive(DeriveIden)]
pub enum Applications {
    Table,
    Id,
    Title,
    DefaultPoolId,
    WebhookUrl,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
pub enum Hosts {
    Table,
    Name,
    CreatedAt,
}

#[derive(DeriveIden)]
pub enum Pools {
    Table,
    Id,
    Title,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
pub enum PoolHosts {
    Table,
    PoolId,
    HostName,
}

#[derive(DeriveIden)]
pub enum DataQueues {
    Table,
    Id,
    Title,
    Kind,
    Address,
    DelayMs,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
pub enum Agents {
    Table,
    ApplicationId,
    Id,
    Title,
    InputKind,
    DataQueueId,
    Concurrency,
    OverlapPolicy,
    ParameterSchema,
    SuggestedDefaults,
    DeclaredBy,
    PublishedAt,
    PublishedByHost,
    PublishedVersion,
    PublishedSchema,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
pub enum Classifiers {
    Table,
    ApplicationId,
    Name,
    Title,
    PublishedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
pub enum ClassifierValues {
    Table,
    ApplicationId,
    ClassifierName,
    Code,
    Label,
    Position,
}

#[derive(DeriveIden)]
pub enum LaunchSettings {
    Table,
    Id,
    Title,
    ApplicationId,
    AgentId,
    Kind,
    Enabled,
    PoolId,
    Parameters,
    StreamMode,
    MessageFilter,
    FailureThreshold,
    RetryInitialDelayMs,
    RetryMultiplier,
    RetryMaxDelayMs,
    MaxDeliveries,
    DeadLetterPolicy,
    ParkCooldownMs,
    DeadLetterNotifyThreshold,
    StartTimeoutMs,
    WorkTimeoutMs,
    MaxRunTimeMs,
    OnLost,
    IdleTimeoutMs,
    WebhookUrl,
    CurrentStatus,
    LastResult,
    LastResultAt,
    LastActivationId,
    DisabledReason,
    DisabledAt,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
pub enum ScheduleGroups {
    Table,
    Id,
    Title,
    ApplicationId,
    Cron,
    TimeZone,
    MisfirePolicy,
    Enabled,
    CurrentStatus,
    LastResult,
    LastResultAt,
    LastFireAt,
    NextFireAt,
    DisabledReason,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
pub enum ScheduleGroupMembers {
    Table,
    GroupId,
    LaunchSettingId,
    Position,
}
