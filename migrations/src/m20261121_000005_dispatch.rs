//! What the manager runtime needs beyond the first data model: the agents each node offers,
//! group failure handling, outbox claims (several replicas relay without sending twice), and
//! the dispatch state of activations (current fencing token, the node a group is pinned to,
//! how long an activation may wait for a node).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::{big_integer, boolean, string, string_null};

use crate::m20261121_000001_catalog::ScheduleGroups;
use crate::m20261121_000002_runtime::{ActivationHosts, Activations, Outbox};
use crate::util::{drop, index, primary_key, table, ts_null};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                table(NodeAgents::Table)
                    .col(string(NodeAgents::ApplicationId))
                    .col(string(NodeAgents::Host))
                    .col(string(NodeAgents::AgentId))
                    .primary_key(&mut primary_key(
                        "pk_node_agents",
                        [
                            NodeAgents::ApplicationId,
                            NodeAgents::Host,
                            NodeAgents::AgentId,
                        ],
                    ))
                    .take(),
            )
            .await?;
        // SQLite takes one column per ALTER TABLE.
        let columns: Vec<(DynIden, ColumnDef)> = vec![
            (
                ScheduleGroups::Table.into_iden(),
                boolean(Alias::new("continue_on_failure"))
                    .default(false)
                    .to_owned(),
            ),
            (
                Outbox::Table.into_iden(),
                string_null(Alias::new("claimed_by")),
            ),
            (
                Outbox::Table.into_iden(),
                ts_null(Alias::new("claimed_until")),
            ),
            (
                Activations::Table.into_iden(),
                string_null(Alias::new("application_id")),
            ),
            (
                Activations::Table.into_iden(),
                big_integer(Alias::new("fencing_token"))
                    .default(0i64)
                    .to_owned(),
            ),
            (
                Activations::Table.into_iden(),
                string_null(Alias::new("pinned_host")),
            ),
            (
                Activations::Table.into_iden(),
                ts_null(Alias::new("wait_until")),
            ),
            (
                ActivationHosts::Table.into_iden(),
                ts_null(Alias::new("stop_requested_at")),
            ),
        ];
        for (t, mut col) in columns {
            manager
                .alter_table(Table::alter().table(t).add_column(&mut col).take())
                .await?;
        }
        manager
            .create_index(index(
                "idx_activations_application_created",
                Activations::Table,
                [Alias::new("application_id"), Alias::new("created_at")],
            ))
            .await?;
        manager
            .create_index(index(
                "idx_activations_status_wait_until",
                Activations::Table,
                [Alias::new("status"), Alias::new("wait_until")],
            ))
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (t, c) in [
            (ActivationHosts::Table.into_iden(), "stop_requested_at"),
            (Activations::Table.into_iden(), "wait_until"),
            (Activations::Table.into_iden(), "pinned_host"),
            (Activations::Table.into_iden(), "fencing_token"),
            (Activations::Table.into_iden(), "application_id"),
            (Outbox::Table.into_iden(), "claimed_until"),
            (Outbox::Table.into_iden(), "claimed_by"),
            (ScheduleGroups::Table.into_iden(), "continue_on_failure"),
        ] {
            if c == "application_id" {
                manager
                    .drop_index(
                        Index::drop()
                            .name("idx_activations_application_created")
                            .table(Activations::Table)
                            .to_owned(),
                    )
                    .await?;
            }
            if c == "wait_until" {
                manager
                    .drop_index(
                        Index::drop()
                            .name("idx_activations_status_wait_until")
                            .table(Activations::Table)
                            .to_owned(),
                    )
                    .await?;
            }
            manager
                .alter_table(Table::alter().table(t).drop_column(Alias::new(c)).take())
                .await?;
        }
        manager.drop_table(drop(NodeAgents::Table)).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

#[derive(DeriveIden)]
pub enum NodeAgents {
    Table,
    ApplicationId,
    Host,
    AgentId,
}
