//! The single row (id 1) of what the broker reconciler last applied, and its lease.
//!
//! Table `broker_topology`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "broker_topology")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: i32,
    /// JSON of `am_services::topology::Applied`.
    #[sea_orm(column_type = "Text")]
    pub applied: String,
    /// The catalog revision `applied` was derived from.
    pub applied_revision: Option<i64>,
    /// The replica that may change the broker until `lease_until`.
    pub holder: Option<String>,
    pub lease_until: Option<DateTimeUtc>,
    pub reconciled_at: Option<DateTimeUtc>,
    #[sea_orm(column_type = "Text", nullable)]
    pub last_error: Option<String>,
    /// An operator asked for a full pass (*Reconcile now*) at this time.
    pub full_requested_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
