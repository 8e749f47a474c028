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
use am_domain::{
    read::search::{Found, Hit},
    roles::Operation,
    shortened,
};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::{Expr, ExprTrait, Func},
};
use uuid::Uuid;

/// Hits of one kind at most.
pub const HITS_PER_KIND: u64 = 10;

/// Activations read within a shortened id's leading digits to find those with its end: the
/// leading 8 digits of a UUIDv7 span ~65 s of runs.
const SHORTENED_SCAN: u64 = 10_000;

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
                    exact: found.is_named_by(&q),
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
                exact: found.is_named_by(&q),
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
                exact: found.is_named_by(&q),
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
                    exact: found.is_named_by(&q),
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
