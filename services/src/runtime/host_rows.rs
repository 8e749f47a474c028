//! What the report handlers share about the rows of runs on hosts (`activation_hosts`): the
//! rows of one node's runs that still run, how their counters are written, and the work
//! timeout that sets their recovery deadline.

use crate::status;
use crate::{
    entity::{activation_hosts, launch_settings},
    error::ServiceResult,
};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect, sea_query::Expr,
};
use std::collections::HashMap;
use uuid::Uuid;

/// The rows of `ids` that host `host` of `application` has accepted or runs: those its
/// heartbeat speaks for.
pub(super) fn running_on(
    application: &str,
    host: &str,
    ids: impl IntoIterator<Item = Uuid>,
) -> Condition {
    Condition::all()
        .add(activation_hosts::Column::ActivationId.is_in(ids))
        .add(activation_hosts::Column::Host.eq(host))
        .add(activation_hosts::Column::ApplicationId.eq(application))
        .add(
            activation_hosts::Column::Status.is_in([status::host::ACCEPTED, status::host::RUNNING]),
        )
}

/// Work timeouts of launch settings, read once per batch.
#[derive(Default)]
pub(super) struct WorkTimeouts(HashMap<String, chrono::Duration>);

impl WorkTimeouts {
    pub(super) async fn of_ls(
        &mut self,
        db: &impl ConnectionTrait,
        ls: &str,
    ) -> ServiceResult<chrono::Duration> {
        if let Some(t) = self.0.get(ls) {
            return Ok(*t);
        }
        let ms: Option<i64> = launch_settings::Entity::find()
            .select_only()
            .column(launch_settings::Column::WorkTimeoutMs)
            .filter(launch_settings::Column::Id.eq(ls))
            .into_tuple()
            .one(db)
            .await?;
        let t = chrono::Duration::milliseconds(ms.unwrap_or(120_000));
        self.0.insert(ls.to_owned(), t);
        Ok(t)
    }
}

/// Sets a host row's counters to what its node reported, never lower than they are: a row is
/// one dispatch, whose counters only grow, and two replicas may commit the heartbeats of one
/// node in either order (a late older one must not take back what the chart already counted).
pub(super) fn with_counters(
    update: sea_orm::UpdateMany<activation_hosts::Entity>,
    c: &am_domain::wire::Counters,
) -> sea_orm::UpdateMany<activation_hosts::Entity> {
    use activation_hosts::Column as C;
    let grown = |col: C, v: u64| {
        let v = i64::try_from(v).unwrap_or(i64::MAX);
        Expr::case(sea_orm::sea_query::ExprTrait::lt(Expr::col(col), v), v).finally(Expr::col(col))
    };
    update
        .col_expr(C::Processed, grown(C::Processed, c.processed).into())
        .col_expr(C::Failed, grown(C::Failed, c.failed).into())
        .col_expr(C::Retried, grown(C::Retried, c.retried).into())
        .col_expr(
            C::DeadLettered,
            grown(C::DeadLettered, c.dead_lettered).into(),
        )
}
