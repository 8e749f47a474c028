//! Which failure reports are real failures (`am_domain::dashboard::failure_kind`, stored with
//! each report as `failure_logs.kind`), and what the pages read of a launch setting's real failures: the newest, and the first
//! since it last succeeded ("failing since"). Both read `idx_failure_logs_ls_occurred_at`.

use crate::{entity::failure_logs, error::ServiceResult};
use am_domain::{
    dashboard::{MESSAGE_SHOWN, cut, failure_kind},
    failing::LastFailure,
};
use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};

/// The failure reports that are real failures ([`failure_kind::FAILED`]).
pub(crate) fn real_failures() -> Condition {
    Condition::all().add(failure_logs::Column::Kind.eq(failure_kind::FAILED))
}

/// The kind of the report a node sent, stored with it (`failure_logs.kind`) so every count
/// reads the same word.
pub(crate) fn of_report(temporary: bool, disposition: Option<&str>) -> String {
    failure_kind::of(temporary, disposition).to_owned()
}

fn of_launch_setting(ls: &str) -> sea_orm::Select<failure_logs::Entity> {
    failure_logs::Entity::find()
        .filter(failure_logs::Column::LaunchSettingId.eq(ls))
        .filter(real_failures())
}

/// The newest real failure of launch setting `ls`.
pub(crate) async fn last_real(
    db: &impl ConnectionTrait,
    ls: &str,
) -> ServiceResult<Option<failure_logs::Model>> {
    Ok(of_launch_setting(ls)
        .order_by_desc(failure_logs::Column::OccurredAt)
        .order_by_desc(failure_logs::Column::Id)
        .one(db)
        .await?)
}

/// The first real failure of `ls` after `last_success` (any kept, without one): since when it
/// fails.
pub(crate) async fn failing_since(
    db: &impl ConnectionTrait,
    ls: &str,
    last_success: Option<DateTime<Utc>>,
) -> ServiceResult<Option<DateTime<Utc>>> {
    let mut first = of_launch_setting(ls);
    if let Some(t) = last_success {
        first = first.filter(failure_logs::Column::OccurredAt.gt(t));
    }
    Ok(first
        .select_only()
        .column(failure_logs::Column::OccurredAt)
        .order_by_asc(failure_logs::Column::OccurredAt)
        .into_tuple()
        .one(db)
        .await?)
}

/// A failure as the pages show the newest one: its message cut.
pub(crate) fn last_failure(f: &failure_logs::Model) -> LastFailure {
    LastFailure {
        error_type: f.error_type.clone(),
        message: cut(&f.message, MESSAGE_SHOWN),
        host: f.host.clone(),
        activation: f.activation_id.to_string(),
        at: f.occurred_at,
    }
}
