//! Classifiers an application publishes: lists of (code, label) values.
//!
//! Table `classifiers`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "classifiers")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub application_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub name: String,
    pub title: String,
    pub published_at: Option<DateTimeUtc>,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::applications::Entity",
        from = "Column::ApplicationId",
        to = "super::applications::Column::Id",
        on_delete = "Cascade"
    )]
    Applications,
    #[sea_orm(has_many = "super::classifier_values::Entity")]
    ClassifierValues,
}

impl Related<super::applications::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Applications.def()
    }
}

impl Related<super::classifier_values::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ClassifierValues.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
