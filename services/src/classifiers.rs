//! Classifier values for parameter pickers: searched in the database, a page at a time, so a
//! classifier of 50,000 values never travels whole to a browser.

use crate::{Principal, entity::classifier_values, error::ServiceResult};
use am_domain::{catalog::ClassifierValue, classifier::ClassifierPage, roles::Operation};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::{Expr, ExprTrait, Func, LikeExpr},
};

/// Most values one search returns.
pub const MAX_SEARCH_LIMIT: u64 = 100;

fn like_pattern(text: &str) -> String {
    let mut p = String::with_capacity(text.len() + 2);
    p.push('%');
    for c in text.trim().to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

fn lowered_like(col: classifier_values::Column, pattern: &str) -> sea_orm::sea_query::SimpleExpr {
    Expr::expr(Func::lower(Expr::col(col))).like(LikeExpr::new(pattern).escape('\\'))
}

pub async fn search(
    db: &impl ConnectionTrait,
    actor: &Principal,
    application: &str,
    classifier: &str,
    text: &str,
    limit: u64,
) -> ServiceResult<ClassifierPage> {
    actor.require(Operation::Read)?;
    let limit = limit.clamp(1, MAX_SEARCH_LIMIT);
    let mut query = classifier_values::Entity::find()
        .filter(classifier_values::Column::ApplicationId.eq(application))
        .filter(classifier_values::Column::ClassifierName.eq(classifier));
    if !text.trim().is_empty() {
        let pattern = like_pattern(text);
        query = query.filter(
            Condition::any()
                .add(lowered_like(classifier_values::Column::Code, &pattern))
                .add(lowered_like(classifier_values::Column::Label, &pattern)),
        );
    }
    let mut rows = query
        .order_by_asc(classifier_values::Column::Position)
        .limit(limit + 1)
        .all(db)
        .await?;
    let more = rows.len() as u64 > limit;
    rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    Ok(ClassifierPage {
        values: rows
            .into_iter()
            .map(|r| ClassifierValue {
                code: r.code,
                label: r.label,
            })
            .collect(),
        more,
    })
}

/// The values with these codes (unknown codes are left out), for showing labels of saved
/// parameters.
pub async fn lookup(
    db: &impl ConnectionTrait,
    actor: &Principal,
    application: &str,
    classifier: &str,
    codes: &[String],
) -> ServiceResult<Vec<ClassifierValue>> {
    actor.require(Operation::Read)?;
    if codes.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::with_capacity(codes.len());
    // In chunks: far below every database's bound-parameter limit.
    for chunk in codes.chunks(500) {
        let rows = classifier_values::Entity::find()
            .filter(classifier_values::Column::ApplicationId.eq(application))
            .filter(classifier_values::Column::ClassifierName.eq(classifier))
            .filter(classifier_values::Column::Code.is_in(chunk.iter().cloned()))
            .all(db)
            .await?;
        out.extend(rows.into_iter().map(|r| ClassifierValue {
            code: r.code,
            label: r.label,
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::like_pattern;

    #[test]
    fn wildcards_in_the_search_text_are_matched_literally() {
        assert_eq!(like_pattern(" Ab%_c\\ "), "%ab\\%\\_c\\\\%");
    }
}
