//! The timeline of an activation.
//!
//! Table `activation_events`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "activation_events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub activation_id: Uuid,
    pub host: Option<String>,
    pub at: DateTimeUtc,
    pub kind: String,
    #[sea_orm(column_type = "Text")]
    pub detail: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::activations::Entity",
        from = "Column::ActivationId",
        to = "super::activations::Column::Id",
        on_delete = "Cascade"
    )]
    Activations,
}

impl Related<super::activations::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Activations.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
