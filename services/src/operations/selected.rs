//! The activations a bulk operation over activations works on (re-run, interrupt): exactly the
//! ids given, each of which must exist, or every activation a filter matches; newest first.

use super::{at_most, missing};
use crate::{activations, entity::activations as activation, error::ServiceResult};
use am_domain::read::activations::ActivationFilter;
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    TryGetableMany,
};
use std::collections::BTreeSet;
use uuid::Uuid;

/// The `columns` (the id first) of the activations selected by `ids`, else by `filter`.
pub(super) async fn activations<T>(
    db: &DatabaseConnection,
    ids: &[Uuid],
    filter: &ActivationFilter,
    columns: impl IntoIterator<Item = activation::Column>,
    id_of: impl Fn(&T) -> Uuid,
) -> ServiceResult<Vec<T>>
where
    T: TryGetableMany,
{
    at_most(ids.len())?;
    let q = if ids.is_empty() {
        activations::matching(filter)?
    } else {
        activation::Entity::find().filter(activation::Column::Id.is_in(ids.iter().copied()))
    };
    let rows: Vec<T> = q
        .select_only()
        .columns(columns)
        .order_by_desc(activation::Column::CreatedAt)
        .order_by_desc(activation::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    if !ids.is_empty() {
        let found: BTreeSet<String> = rows.iter().map(|r| id_of(r).to_string()).collect();
        let wanted: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        missing(&wanted, &found, "activation")?;
    }
    Ok(rows)
}
