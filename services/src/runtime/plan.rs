//! Rows a runtime step writes, gathered first and written with multi-row inserts in foreign-key
//! order, so a batch of thousands of fires costs a handful of statements.

use super::CHUNK;
use crate::{
    entity::{activation_events, activation_hosts, activations, outbox},
    error::ServiceResult,
};
use am_domain::{
    status::EventLabel,
    wire::{self, ToNode, names::Names},
};
use chrono::{DateTime, Utc};
use sea_orm::{ActiveValue::Set, ConnectionTrait, DbBackend, EntityTrait, QueryTrait, Statement};
use uuid::Uuid;

#[derive(Default)]
pub(crate) struct Plan {
    pub activations: Vec<activations::ActiveModel>,
    pub hosts: Vec<activation_hosts::ActiveModel>,
    pub outbox: Vec<outbox::ActiveModel>,
    pub events: Vec<activation_events::ActiveModel>,
}

impl Plan {
    /// An entry of `activation`'s timeline (`kind`: an [`EventKind`](am_domain::status::EventKind),
    /// or one with why).
    pub fn event<'a>(
        &mut self,
        activation: Uuid,
        host: Option<&str>,
        kind: impl Into<EventLabel<'a>>,
        detail: impl Into<String>,
        at: DateTime<Utc>,
    ) {
        let detail: String = detail.into();
        let kind = kind.into().to_string();
        self.events.push(activation_events::ActiveModel {
            activation_id: Set(activation),
            host: Set(host.map(str::to_owned)),
            at: Set(at),
            kind: Set(kind),
            detail: Set((!detail.is_empty()).then_some(detail)),
            ..Default::default()
        });
    }

    /// A command for one node, published by the relay after commit under the current span.
    pub fn command(
        &mut self,
        names: &Names,
        application: &str,
        host: &str,
        command: &ToNode,
        message_id: String,
        now: DateTime<Utc>,
    ) {
        self.outbox.push(outbox::ActiveModel {
            exchange: Set(names.control_exchange()),
            routing_key: Set(names.node_routing_key(application, host)),
            payload: Set(wire::encode_command(command)),
            headers: Set(crate::trace_context::current()),
            message_id: Set(message_id),
            created_at: Set(now),
            available_at: Set(now),
            attempts: Set(0),
            last_error: Set(None),
            sent_at: Set(None),
            claimed_by: Set(None),
            claimed_until: Set(None),
            ..Default::default()
        });
    }

    pub async fn write(self, db: &impl ConnectionTrait) -> ServiceResult<()> {
        for s in self.statements(db.get_database_backend()) {
            db.execute_raw(s).await?;
        }
        Ok(())
    }

    /// The inserts, built without touching the database (a batch of fires keeps them apart from
    /// its group activations, which go first).
    pub fn statements(self, backend: DbBackend) -> Vec<Statement> {
        let mut out = Vec::new();
        inserts::<activations::Entity, _>(&mut out, backend, self.activations);
        inserts::<activation_hosts::Entity, _>(&mut out, backend, self.hosts);
        inserts::<outbox::Entity, _>(&mut out, backend, self.outbox);
        inserts::<activation_events::Entity, _>(&mut out, backend, self.events);
        out
    }
}

fn inserts<E, A>(out: &mut Vec<Statement>, backend: DbBackend, rows: Vec<A>)
where
    E: EntityTrait,
    A: sea_orm::ActiveModelTrait<Entity = E>,
{
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<A> = rows.by_ref().take(CHUNK).collect();
        out.push(E::insert_many(chunk).build(backend));
    }
}
