//! The global search (docs/concepts.md, Finding anything): what an operator pastes or types —
//! part of an id or title of any catalog entity, a host name, an error type, an activation's id (whole, its
//! first digits or shortened as pages show it), a dead letter's message id or `#number` —
//! found from every page.
//!
//! Catalog tables, host names and error types (`error_types`: one row per launch setting and
//! error type, not the failure logs) hold thousands of rows at most: each is matched on
//! `LOWER(id)` and `LOWER(title)` (or the name) containing the text, a bounded number of hits
//! each.
//! Activations and dead letters hold millions: they are looked up only through an index — an
//! activation by the range of ids its typed digits span (the primary key, newest first), a dead
//! letter by its message id (`idx_dead_letters_message_id`) or number — never scanned.

use crate::{
    Principal,
    entity::{
        activations, agents, applications, data_queues, dead_letters,
        error_types::Column as ErrorTypes, hosts, launch_settings, pools, schedule_groups,
    },
    error::ServiceResult,
    failures::error_types,
};
use am_domain::{roles::Operation, shortened, usage::EntityRef};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::{Expr, ExprTrait, Func},
};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Hits of one kind at most.
pub const HITS_PER_KIND: u64 = 10;

/// Activations read within a shortened id's leading digits to find those with its end: the
/// leading 8 digits of a UUIDv7 span ~65 s of runs.
const SHORTENED_SCAN: u64 = 10_000;

/// What a hit points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Found {
    Application {
        id: String,
    },
    Pool {
        id: String,
    },
    DataQueue {
        id: String,
    },
    Agent {
        application: String,
        id: String,
    },
    LaunchSetting {
        id: String,
    },
    ScheduleGroup {
        id: String,
    },
    /// A host name of a pool.
    Host {
        name: String,
    },
    /// An error type failures reported (and that are still stored).
    ErrorType {
        name: String,
    },
    Activation {
        id: Uuid,
    },
    DeadLetter {
        id: i64,
    },
}

impl Found {
    /// The catalog entity, if it is one.
    pub fn entity(&self) -> Option<EntityRef> {
        Some(match self {
            Found::Application { id } => EntityRef::Application(id.clone()),
            Found::Pool { id } => EntityRef::Pool(id.clone()),
            Found::DataQueue { id } => EntityRef::DataQueue(id.clone()),
            Found::Agent { application, id } => EntityRef::agent(application, id),
            Found::LaunchSetting { id } => EntityRef::LaunchSetting(id.clone()),
            Found::ScheduleGroup { id } => EntityRef::ScheduleGroup(id.clone()),
            Found::Host { .. }
            | Found::ErrorType { .. }
            | Found::Activation { .. }
            | Found::DeadLetter { .. } => {
                return None;
            }
        })
    }

    /// What names the hit as an operator would type it whole.
    fn names(&self, lowered: &str) -> bool {
        match self {
            Found::Application { id }
            | Found::Pool { id }
            | Found::DataQueue { id }
            | Found::LaunchSetting { id }
            | Found::ScheduleGroup { id } => id == lowered,
            Found::Agent { application, id } => {
                *id == lowered || format!("{application}/{id}") == lowered
            }
            Found::Host { name } | Found::ErrorType { name } => name.to_lowercase() == lowered,
            Found::Activation { .. } | Found::DeadLetter { .. } => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Hit {
    #[serde(flatten)]
    pub found: Found,
    /// The title, or what else tells the hit apart (a dead letter's message id, an
    /// activation's launch setting).
    pub label: String,
    /// The text named this hit whole (its id, a whole activation id, a message id): a page may
    /// go straight to it when it is the only such hit.
    pub exact: bool,
}

/// `LOWER(column) LIKE '%text%'` with the text's own `%`, `_` and `\` taken literally.
fn contains<C: ColumnTrait>(column: C, lowered: &str) -> Condition {
    let escaped = lowered
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    Condition::all().add(
        Expr::expr(Func::lower(Expr::col(column)))
            .like(sea_orm::sea_query::LikeExpr::new(format!("%{escaped}%")).escape('\\')),
    )
}

fn id_or_title<C: ColumnTrait>(id: C, title: C, lowered: &str) -> Condition {
    Condition::any()
        .add(contains(id, lowered))
        .add(contains(title, lowered))
}

/// Everything matching `text` (trimmed; nothing for an empty text), catalog entities first.
pub async fn find(
    db: &impl ConnectionTrait,
    actor: &Principal,
    text: &str,
) -> ServiceResult<Vec<Hit>> {
    actor.require(Operation::Read)?;
    let text = text.trim();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let q = text.to_lowercase();
    let mut hits = Vec::new();

    macro_rules! by_id_and_title {
        ($entity:ident, $found:expr) => {{
            use $entity::Column as C;
            let rows: Vec<(String, String)> = $entity::Entity::find()
                .select_only()
                .columns([C::Id, C::Title])
                .filter(id_or_title(C::Id, C::Title, &q))
                .order_by_asc(C::Id)
                .limit(HITS_PER_KIND)
                .into_tuple()
                .all(db)
                .await?;
            hits.extend(rows.into_iter().map(|(id, label)| {
                let found = $found(id);
                Hit {
                    exact: found.names(&q),
                    found,
                    label,
                }
            }));
        }};
    }
    by_id_and_title!(launch_settings, |id| Found::LaunchSetting { id });
    by_id_and_title!(schedule_groups, |id| Found::ScheduleGroup { id });
    by_id_and_title!(applications, |id| Found::Application { id });
    by_id_and_title!(data_queues, |id| Found::DataQueue { id });
    by_id_and_title!(pools, |id| Found::Pool { id });
    {
        use agents::Column as C;
        let rows: Vec<(String, String, String)> = agents::Entity::find()
            .select_only()
            .columns([C::ApplicationId, C::Id, C::Title])
            .filter(id_or_title(C::Id, C::Title, &q))
            .order_by_asc(C::ApplicationId)
            .order_by_asc(C::Id)
            .limit(HITS_PER_KIND)
            .into_tuple()
            .all(db)
            .await?;
        hits.extend(rows.into_iter().map(|(application, id, label)| {
            let found = Found::Agent { application, id };
            Hit {
                exact: found.names(&q),
                found,
                label,
            }
        }));
    }
    {
        let names: Vec<String> = hosts::Entity::find()
            .select_only()
            .column(hosts::Column::Name)
            .filter(contains(hosts::Column::Name, &q))
            .order_by_asc(hosts::Column::Name)
            .limit(HITS_PER_KIND)
            .into_tuple()
            .all(db)
            .await?;
        hits.extend(names.into_iter().map(|name| {
            let found = Found::Host { name };
            Hit {
                exact: found.names(&q),
                found,
                label: "host".to_owned(),
            }
        }));
    }

    hits.extend(
        error_types::matching(db, contains(ErrorTypes::ErrorType, &q), HITS_PER_KIND)
            .await?
            .into_iter()
            .map(|known| {
                let found = Found::ErrorType {
                    name: known.error_type,
                };
                Hit {
                    exact: found.names(&q),
                    found,
                    label: match known.launch_settings {
                        1 => "error type of 1 launch setting".to_owned(),
                        n => format!("error type of {n} launch settings"),
                    },
                }
            }),
    );

    if let Some(span) = shortened::parse(text) {
        hits.extend(activations_in(db, &span).await?);
    }
    let number = text.strip_prefix('#').and_then(|n| n.parse::<i64>().ok());
    let dead: Vec<(i64, Option<String>)> = dead_letters::Entity::find()
        .select_only()
        .columns([dead_letters::Column::Id, dead_letters::Column::MessageId])
        .filter(
            Condition::any()
                .add(dead_letters::Column::MessageId.eq(text))
                .add_option(number.map(|n| dead_letters::Column::Id.eq(n))),
        )
        .order_by_desc(dead_letters::Column::Id)
        .limit(HITS_PER_KIND)
        .into_tuple()
        .all(db)
        .await?;
    hits.extend(dead.into_iter().map(|(id, message)| Hit {
        found: Found::DeadLetter { id },
        exact: true,
        label: message.unwrap_or_default(),
    }));
    Ok(hits)
}

/// The activations `span` names, newest first: through the primary key's range, the ends
/// compared here (the last digits of a shortened id are not in any index).
async fn activations_in(
    db: &impl ConnectionTrait,
    span: &shortened::IdSpan,
) -> ServiceResult<Vec<Hit>> {
    use activations::Column as C;
    let rows: Vec<(Uuid, Option<String>, Option<String>)> = activations::Entity::find()
        .select_only()
        .columns([C::Id, C::LaunchSettingId, C::GroupId])
        .filter(C::Id.between(Uuid::from_bytes(span.lo), Uuid::from_bytes(span.hi)))
        .order_by_desc(C::Id)
        .limit(if span.tail.is_some() {
            SHORTENED_SCAN
        } else {
            HITS_PER_KIND
        })
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .filter(|(id, _, _)| span.matches(id.as_bytes()))
        .take(HITS_PER_KIND as usize)
        .map(|(id, ls, group)| Hit {
            found: Found::Activation { id },
            exact: span.is_whole(),
            label: ls
                .or(group.map(|g| format!("group {g}")))
                .unwrap_or_default(),
        })
        .collect())
}
