//! The ordered values of a classifier.
//!
//! Table `classifier_values`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "classifier_values")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub application_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub classifier_name: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub code: String,
    pub label: String,
    pub position: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::classifiers::Entity",
        from = "(Column::ApplicationId, Column::ClassifierName)",
        to = "(super::classifiers::Column::ApplicationId, super::classifiers::Column::Name)",
        on_delete = "Cascade"
    )]
    Classifiers,
}

impl Related<super::classifiers::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Classifiers.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
