//! An operator's *Interrupt* of one activation (docs/runtime.md, Interrupt): a waiting run ends
//! at once, a running one gets *interrupt* on each host still running it; a group's run ends
//! first, so no further member starts, then its running member is interrupted.

use super::{RuntimeConfig, ending::end_activation, groups, stopping::Ending};
use crate::status::{self, activation::ACTIVE};
use crate::{
    Principal,
    audit::{self, AuditEntry},
    entity::activations,
    error::{ServiceError, ServiceResult},
};
use am_domain::roles::Operation;
use chrono::Utc;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

/// Interrupts an activation still waiting or running, for operators. The activation ends
/// `interrupted` once its nodes confirm (a waiting one at once); an ended one is a conflict.
pub async fn interrupt(
    db: &DatabaseConnection,
    cfg: &RuntimeConfig,
    actor: &Principal,
    activation: &str,
) -> ServiceResult<()> {
    actor.require(Operation::Interrupt)?;
    let a = super::run::find(db, activation).await?;
    if !ACTIVE.contains(&a.status.as_str()) {
        return Err(ServiceError::Conflict(format!(
            "activation {} has already ended ({}): there is nothing to interrupt",
            a.id, a.status
        )));
    }
    let reason = format!("interrupted by {}", actor.name);
    let now = Utc::now();
    let group_run = a.parent_id.is_none() && a.group_id.is_some();
    let txn = super::begin_write(db).await?;
    if group_run {
        groups::finish_group(
            &txn,
            &a,
            status::activation::INTERRUPTED,
            Some(reason.clone()),
            now,
        )
        .await?;
    }
    let (kind, id) = match (&a.launch_setting_id, &a.group_id) {
        (Some(ls), _) if !group_run => ("launch_setting", ls.clone()),
        (_, Some(g)) => ("schedule_group", g.clone()),
        _ => ("activation", a.id.to_string()),
    };
    audit::record(
        &txn,
        AuditEntry::new(actor, "interrupt", kind, &id).after(&serde_json::json!({
            "activation": a.id.to_string(),
            "status": a.status,
        })),
    )
    .await?;
    txn.commit().await?;
    let runs = if group_run {
        activations::Entity::find()
            .filter(activations::Column::ParentId.eq(a.id))
            .filter(activations::Column::Status.is_in(ACTIVE))
            .all(db)
            .await?
    } else {
        vec![a]
    };
    for run in runs {
        end_activation(db, cfg, &run, &reason, Ending::Interrupt, now).await?;
    }
    Ok(())
}
