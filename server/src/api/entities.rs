//! CRUD per catalog entity: `/api/v1/{applications,pools,data-queues,agents,launch-settings,
//! schedule-groups}[/{id}]`. Agents are scoped by application: `/api/v1/agents/{application}/{id}`.
//! Every handler checks the role (inside the service), calls one service function and maps
//! its error.

use super::json::{ApiJson, EntityJson};
use crate::api::query::ApiQuery;
use crate::{
    auth::{Allowed, Caller, may},
    error::{ApiResult, AppError, ErrorBody},
    state::AppState,
};
use am_domain::read::run_status::RunStatus;
use am_domain::usage::EntityRef;
use am_services::catalog;
use axum::{
    Json, Router,
    extract::{Path, State},
    http::StatusCode,
    routing::post,
};

/// Handlers for an entity whose id is unique on its own.
macro_rules! crud {
    ($module:ident, $ty:ty, $variant:ident, $tag:literal, $collection:literal, $item:literal) => {
        pub mod $module {
            use super::*;
            use $ty as Entity;

            #[utoipa::path(get, path = $collection, tag = $tag, responses(
                (status = 200, body = Vec<Entity>), (status = 401, body = ErrorBody)))]
            pub async fn list(State(s): State<AppState>, Caller(who): Caller) -> ApiResult<Json<Vec<Entity>>> {
                Ok(Json(catalog::list::<Entity>(&s.services.db, &who).await?))
            }

            #[utoipa::path(get, path = $item, tag = $tag, params(("id" = String, Path)), responses(
                (status = 200, body = Entity), (status = 404, body = ErrorBody)))]
            pub async fn get(State(s): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<Json<Entity>> {
                Ok(Json(catalog::get::<Entity>(&s.services.db, &who, &EntityRef::$variant(id)).await?))
            }

            #[utoipa::path(post, path = $collection, tag = $tag, request_body = Entity, responses(
                (status = 201, body = Entity), (status = 403, body = ErrorBody),
                (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
            pub async fn create(
                State(s): State<AppState>,
                Allowed(who, _): Allowed<may::EditCatalog>,
                ApiJson(body): ApiJson<Entity>,
            ) -> ApiResult<(StatusCode, Json<Entity>)> {
                Ok((StatusCode::CREATED, Json(catalog::create(&s.services.db, &who, body).await?)))
            }

            #[utoipa::path(put, path = $item, tag = $tag, params(("id" = String, Path)), request_body = Entity,
                responses((status = 200, body = Entity), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
            pub async fn update(
                State(s): State<AppState>,
                Allowed(who, _): Allowed<may::EditCatalog>,
                Path(id): Path<String>,
                ApiJson(body): ApiJson<Entity>,
            ) -> ApiResult<Json<Entity>> {
                Ok(Json(catalog::update(&s.services.db, &who, &EntityRef::$variant(id), body).await?))
            }

            #[utoipa::path(delete, path = $item, tag = $tag, params(("id" = String, Path)), responses(
                (status = 204), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "in use")))]
            pub async fn delete(State(s): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<StatusCode> {
                catalog::delete::<Entity>(&s.services.db, &who, &EntityRef::$variant(id)).await?;
                Ok(StatusCode::NO_CONTENT)
            }

            pub fn router() -> Router<AppState> {
                Router::new()
                    .route($collection, axum::routing::get(list).post(create))
                    .route($item, axum::routing::get(get).put(update).delete(delete))
            }
        }
    };
}

/// What *Run now* started.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Started {
    /// The new activation (a group activation for groups).
    pub activation: String,
}

/// Enable/disable/run endpoints for launch settings and schedule groups.
macro_rules! switch {
    ($variant:ident, $tag:literal, $enable:literal, $disable:literal, $run:literal) => {
        #[utoipa::path(post, path = $enable, tag = $tag, params(("id" = String, Path)), responses(
            (status = 204), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
        pub async fn enable(State(s): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<StatusCode> {
            let cause = format!("enabled by {}", who.name);
            catalog::set_enabled(&s.services.db, &who, &EntityRef::$variant(id), true, &cause).await?;
            Ok(StatusCode::NO_CONTENT)
        }

        #[utoipa::path(post, path = $disable, tag = $tag, params(("id" = String, Path)), responses(
            (status = 204), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
        pub async fn disable(State(s): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<StatusCode> {
            let cause = format!("disabled by {}", who.name);
            catalog::set_enabled(&s.services.db, &who, &EntityRef::$variant(id), false, &cause).await?;
            Ok(StatusCode::NO_CONTENT)
        }

        /// Starts an activation now (operators); 409 when disabled or, for a stream, already
        /// running.
        #[utoipa::path(post, path = $run, tag = $tag, params(("id" = String, Path)), responses(
            (status = 202, body = Started), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
            (status = 409, body = ErrorBody)))]
        pub async fn run(State(s): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<(StatusCode, Json<Started>)> {
            let activation = am_services::runtime::run::run_now(
                &s.services.db, &s.services.runtime, &who, &EntityRef::$variant(id),
            )
            .await?;
            Ok((StatusCode::ACCEPTED, Json(Started { activation: activation.to_string() })))
        }

        pub fn switch_router() -> Router<AppState> {
            Router::new()
                .route($enable, post(enable))
                .route($disable, post(disable))
                .route($run, post(run))
        }
    };
}

crud!(
    applications,
    am_domain::catalog::Application,
    Application,
    "applications",
    "/api/v1/applications",
    "/api/v1/applications/{id}"
);
crud!(
    pools,
    am_domain::catalog::Pool,
    Pool,
    "pools",
    "/api/v1/pools",
    "/api/v1/pools/{id}"
);
crud!(
    data_queues,
    am_domain::catalog::DataQueue,
    DataQueue,
    "data-queues",
    "/api/v1/data-queues",
    "/api/v1/data-queues/{id}"
);

/// A schedule group and its runtime status (`status` is read-only: ignored when sent back).
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct ScheduleGroupView {
    #[serde(flatten)]
    pub group: am_domain::catalog::ScheduleGroup,
    pub status: Option<RunStatus>,
}

pub mod schedule_groups {
    use super::*;
    use am_domain::catalog::ScheduleGroup;

    async fn with_status(
        s: &AppState,
        who: &am_services::Principal,
        groups: Vec<ScheduleGroup>,
    ) -> ApiResult<Vec<ScheduleGroupView>> {
        let ids: Vec<String> = groups.iter().map(|g| g.id.clone()).collect();
        let mut st = am_services::run_status::of_schedule_groups(&s.services.db, who, &ids).await?;
        Ok(groups
            .into_iter()
            .map(|group| ScheduleGroupView {
                status: st.remove(&group.id),
                group,
            })
            .collect())
    }

    #[utoipa::path(get, path = "/api/v1/schedule-groups", tag = "schedule-groups", responses(
        (status = 200, body = Vec<ScheduleGroupView>), (status = 401, body = ErrorBody)))]
    pub async fn list(
        State(s): State<AppState>,
        Caller(who): Caller,
    ) -> ApiResult<Json<Vec<ScheduleGroupView>>> {
        let groups = catalog::list::<ScheduleGroup>(&s.services.db, &who).await?;
        Ok(Json(with_status(&s, &who, groups).await?))
    }

    #[utoipa::path(get, path = "/api/v1/schedule-groups/{id}", tag = "schedule-groups",
        params(("id" = String, Path)),
        responses((status = 200, body = ScheduleGroupView), (status = 404, body = ErrorBody)))]
    pub async fn get(
        State(s): State<AppState>,
        Caller(who): Caller,
        Path(id): Path<String>,
    ) -> ApiResult<Json<ScheduleGroupView>> {
        let group =
            catalog::get::<ScheduleGroup>(&s.services.db, &who, &EntityRef::ScheduleGroup(id))
                .await?;
        let mut views = with_status(&s, &who, vec![group]).await?;
        views.pop().map(Json).ok_or_else(|| {
            AppError::Service(am_services::ServiceError::Internal("lost the group".into()))
        })
    }

    #[utoipa::path(post, path = "/api/v1/schedule-groups", tag = "schedule-groups",
        request_body = ScheduleGroup, responses(
        (status = 201, body = ScheduleGroup), (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
    pub async fn create(
        State(s): State<AppState>,
        Allowed(who, _): Allowed<may::EditCatalog>,
        EntityJson(body): EntityJson<ScheduleGroup>,
    ) -> ApiResult<(StatusCode, Json<ScheduleGroup>)> {
        Ok((
            StatusCode::CREATED,
            Json(catalog::create(&s.services.db, &who, body).await?),
        ))
    }

    #[utoipa::path(put, path = "/api/v1/schedule-groups/{id}", tag = "schedule-groups",
        params(("id" = String, Path)), request_body = ScheduleGroup,
        responses((status = 200, body = ScheduleGroup), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
    pub async fn update(
        State(s): State<AppState>,
        Allowed(who, _): Allowed<may::EditCatalog>,
        Path(id): Path<String>,
        EntityJson(body): EntityJson<ScheduleGroup>,
    ) -> ApiResult<Json<ScheduleGroup>> {
        Ok(Json(
            catalog::update(&s.services.db, &who, &EntityRef::ScheduleGroup(id), body).await?,
        ))
    }

    /// `?with_members=true`: delete the group's members that are in no other group with it.
    #[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
    #[into_params(parameter_in = Query)]
    pub struct DeleteQuery {
        /// Also delete the members this group is the only group of (a scheduled launch
        /// setting must be in one); without it such a group is refused with 409.
        pub with_members: Option<bool>,
    }

    #[utoipa::path(delete, path = "/api/v1/schedule-groups/{id}", tag = "schedule-groups",
        params(("id" = String, Path), DeleteQuery), responses(
        (status = 204), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "the only group of a member: delete it `?with_members=true`")))]
    pub async fn delete(
        State(s): State<AppState>,
        Caller(who): Caller,
        Path(id): Path<String>,
        ApiQuery(q): ApiQuery<DeleteQuery>,
    ) -> ApiResult<StatusCode> {
        if q.with_members == Some(true) {
            catalog::delete_group_with_members(&s.services.db, &who, &id).await?;
        } else {
            catalog::delete::<ScheduleGroup>(&s.services.db, &who, &EntityRef::ScheduleGroup(id))
                .await?;
        }
        Ok(StatusCode::NO_CONTENT)
    }

    switch!(
        ScheduleGroup,
        "schedule-groups",
        "/api/v1/schedule-groups/{id}/enable",
        "/api/v1/schedule-groups/{id}/disable",
        "/api/v1/schedule-groups/{id}/run"
    );

    pub fn router() -> Router<AppState> {
        Router::new()
            .route(
                "/api/v1/schedule-groups",
                axum::routing::get(list).post(create),
            )
            .route(
                "/api/v1/schedule-groups/{id}",
                axum::routing::get(get).put(update).delete(delete),
            )
            .merge(switch_router())
    }
}

pub mod agents {
    use super::*;
    use am_domain::catalog::Agent;

    fn key(application: String, id: String) -> EntityRef {
        EntityRef::Agent { application, id }
    }

    #[utoipa::path(get, path = "/api/v1/agents", tag = "agents", responses((status = 200, body = Vec<Agent>)))]
    pub async fn list(
        State(s): State<AppState>,
        Caller(who): Caller,
    ) -> ApiResult<Json<Vec<Agent>>> {
        Ok(Json(catalog::list::<Agent>(&s.services.db, &who).await?))
    }

    #[utoipa::path(get, path = "/api/v1/agents/{application}/{id}", tag = "agents",
        params(("application" = String, Path), ("id" = String, Path)),
        responses((status = 200, body = Agent), (status = 404, body = ErrorBody)))]
    pub async fn get(
        State(s): State<AppState>,
        Caller(who): Caller,
        Path((application, id)): Path<(String, String)>,
    ) -> ApiResult<Json<Agent>> {
        Ok(Json(
            catalog::get::<Agent>(&s.services.db, &who, &key(application, id)).await?,
        ))
    }

    #[utoipa::path(post, path = "/api/v1/agents", tag = "agents", request_body = Agent, responses(
        (status = 201, body = Agent), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
    pub async fn create(
        State(s): State<AppState>,
        Allowed(who, _): Allowed<may::EditCatalog>,
        ApiJson(body): ApiJson<Agent>,
    ) -> ApiResult<(StatusCode, Json<Agent>)> {
        Ok((
            StatusCode::CREATED,
            Json(catalog::create(&s.services.db, &who, body).await?),
        ))
    }

    #[utoipa::path(put, path = "/api/v1/agents/{application}/{id}", tag = "agents",
        params(("application" = String, Path), ("id" = String, Path)), request_body = Agent,
        responses((status = 200, body = Agent), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
    pub async fn update(
        State(s): State<AppState>,
        Allowed(who, _): Allowed<may::EditCatalog>,
        Path((application, id)): Path<(String, String)>,
        ApiJson(body): ApiJson<Agent>,
    ) -> ApiResult<Json<Agent>> {
        Ok(Json(
            catalog::update(&s.services.db, &who, &key(application, id), body).await?,
        ))
    }

    #[utoipa::path(delete, path = "/api/v1/agents/{application}/{id}", tag = "agents",
        params(("application" = String, Path), ("id" = String, Path)),
        responses((status = 204), (status = 409, body = ErrorBody, description = "in use")))]
    pub async fn delete(
        State(s): State<AppState>,
        Caller(who): Caller,
        Path((application, id)): Path<(String, String)>,
    ) -> ApiResult<StatusCode> {
        catalog::delete::<Agent>(&s.services.db, &who, &key(application, id)).await?;
        Ok(StatusCode::NO_CONTENT)
    }

    pub fn router() -> Router<AppState> {
        Router::new()
            .route("/api/v1/agents", axum::routing::get(list).post(create))
            .route(
                "/api/v1/agents/{application}/{id}",
                axum::routing::get(get).put(update).delete(delete),
            )
    }
}

/// A launch setting and its runtime status, with its backlog (`status` is read-only: ignored
/// when sent back).
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct LaunchSettingView {
    #[serde(flatten)]
    pub setting: am_domain::catalog::LaunchSetting,
    pub status: Option<RunStatus>,
}

pub mod launch_settings {
    use super::*;
    use am_domain::catalog::LaunchSetting;
    use serde::Deserialize;

    /// `?groups=a,b`: the schedule groups a scheduled launch setting belongs to (saved with it).
    #[derive(Debug, Deserialize, utoipa::IntoParams)]
    #[into_params(parameter_in = Query)]
    pub struct GroupsQuery {
        /// Comma-separated schedule group ids; when given, the launch setting is a member of
        /// exactly these groups.
        pub groups: Option<String>,
    }

    fn groups(q: GroupsQuery) -> Option<Vec<String>> {
        q.groups.map(|g| {
            g.split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        })
    }

    /// `settings` with their status; one read of the catalog for the backlogs.
    async fn with_status(
        s: &AppState,
        who: &am_services::Principal,
        catalog: &am_domain::catalog::Catalog,
        settings: Vec<LaunchSetting>,
    ) -> ApiResult<Vec<LaunchSettingView>> {
        let refs: Vec<&LaunchSetting> = settings.iter().collect();
        let mut st = am_services::run_status::of_launch_settings_with_backlog(
            &s.services.db,
            who,
            &s.services.broker_depths,
            catalog,
            &refs,
        )
        .await?;
        Ok(settings
            .into_iter()
            .map(|setting| LaunchSettingView {
                status: st.remove(&setting.id),
                setting,
            })
            .collect())
    }

    #[utoipa::path(get, path = "/api/v1/launch-settings", tag = "launch-settings", responses((status = 200, body = Vec<LaunchSettingView>)))]
    pub async fn list(
        State(s): State<AppState>,
        Caller(who): Caller,
    ) -> ApiResult<Json<Vec<LaunchSettingView>>> {
        let catalog = catalog::overview(&s.services.db, &who).await?;
        let settings = catalog.launch_settings.clone();
        Ok(Json(with_status(&s, &who, &catalog, settings).await?))
    }

    #[utoipa::path(get, path = "/api/v1/launch-settings/{id}", tag = "launch-settings", params(("id" = String, Path)),
        responses((status = 200, body = LaunchSettingView), (status = 404, body = ErrorBody)))]
    pub async fn get(
        State(s): State<AppState>,
        Caller(who): Caller,
        Path(id): Path<String>,
    ) -> ApiResult<Json<LaunchSettingView>> {
        let catalog = catalog::overview(&s.services.db, &who).await?;
        let setting = catalog.launch_setting(&id).cloned().ok_or_else(|| {
            AppError::Service(am_services::ServiceError::NotFound(
                EntityRef::LaunchSetting(id).to_string(),
            ))
        })?;
        let mut views = with_status(&s, &who, &catalog, vec![setting]).await?;
        views.pop().map(Json).ok_or_else(|| {
            AppError::Service(am_services::ServiceError::Internal(
                "lost the launch setting".into(),
            ))
        })
    }

    #[utoipa::path(post, path = "/api/v1/launch-settings", tag = "launch-settings", params(GroupsQuery),
        request_body = LaunchSetting,
        responses((status = 201, body = LaunchSetting), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
    pub async fn create(
        State(s): State<AppState>,
        Allowed(who, _): Allowed<may::EditCatalog>,
        ApiQuery(q): ApiQuery<GroupsQuery>,
        EntityJson(body): EntityJson<LaunchSetting>,
    ) -> ApiResult<(StatusCode, Json<LaunchSetting>)> {
        let saved =
            catalog::save_launch_setting(&s.services.db, &who, body, groups(q), true).await?;
        Ok((StatusCode::CREATED, Json(saved)))
    }

    #[utoipa::path(put, path = "/api/v1/launch-settings/{id}", tag = "launch-settings",
        params(("id" = String, Path), GroupsQuery), request_body = LaunchSetting,
        responses((status = 200, body = LaunchSetting), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
    pub async fn update(
        State(s): State<AppState>,
        Allowed(who, _): Allowed<may::EditCatalog>,
        Path(id): Path<String>,
        ApiQuery(q): ApiQuery<GroupsQuery>,
        EntityJson(body): EntityJson<LaunchSetting>,
    ) -> ApiResult<Json<LaunchSetting>> {
        if body.id != id {
            return Err(AppError::Service(am_services::ServiceError::invalid(
                "id",
                format!(
                    "the id cannot be changed (this is launch setting '{id}'; the body names '{}')",
                    body.id
                ),
            )));
        }
        catalog::get::<LaunchSetting>(&s.services.db, &who, &EntityRef::LaunchSetting(id)).await?;
        Ok(Json(
            catalog::save_launch_setting(&s.services.db, &who, body, groups(q), false).await?,
        ))
    }

    #[utoipa::path(delete, path = "/api/v1/launch-settings/{id}", tag = "launch-settings", params(("id" = String, Path)),
        responses((status = 204, description = "deleted; it left the schedule groups it was a member of"),
        (status = 404, body = ErrorBody)))]
    pub async fn delete(
        State(s): State<AppState>,
        Caller(who): Caller,
        Path(id): Path<String>,
    ) -> ApiResult<StatusCode> {
        catalog::delete::<LaunchSetting>(&s.services.db, &who, &EntityRef::LaunchSetting(id))
            .await?;
        Ok(StatusCode::NO_CONTENT)
    }

    /// Puts a host its `MANY` breaker quarantined back into the launch setting's rotation (a
    /// running stream joins it again within a second). Re-enabling the launch setting clears
    /// every host at once.
    #[utoipa::path(delete, path = "/api/v1/launch-settings/{id}/quarantines/{host}", tag = "launch-settings",
        params(("id" = String, Path), ("host" = String, Path)),
        responses((status = 204), (status = 403, body = ErrorBody, description = "operators only"),
            (status = 404, body = ErrorBody, description = "the host is not quarantined")))]
    pub async fn clear_quarantine(
        State(s): State<AppState>,
        Caller(who): Caller,
        Path((id, host)): Path<(String, String)>,
    ) -> ApiResult<StatusCode> {
        am_services::quarantine::clear(&s.services.db, &who, &id, &host).await?;
        Ok(StatusCode::NO_CONTENT)
    }

    switch!(
        LaunchSetting,
        "launch-settings",
        "/api/v1/launch-settings/{id}/enable",
        "/api/v1/launch-settings/{id}/disable",
        "/api/v1/launch-settings/{id}/run"
    );

    pub fn router() -> Router<AppState> {
        Router::new()
            .route(
                "/api/v1/launch-settings",
                axum::routing::get(list).post(create),
            )
            .route(
                "/api/v1/launch-settings/{id}",
                axum::routing::get(get).put(update).delete(delete),
            )
            .route(
                "/api/v1/launch-settings/{id}/quarantines/{host}",
                axum::routing::delete(clear_quarantine),
            )
            .merge(switch_router())
    }
}

pub fn router() -> Router<AppState> {
    Router::new()
        .merge(applications::router())
        .merge(pools::router())
        .merge(data_queues::router())
        .merge(agents::router())
        .merge(launch_settings::router())
        .merge(schedule_groups::router())
}
