//! Entity types under sea-orm-cli names: `Applications` is `applications::Entity`.

pub use super::activation_events::Entity as ActivationEvents;
pub use super::activation_hosts::Entity as ActivationHosts;
pub use super::activations::Entity as Activations;
pub use super::agents::Entity as Agents;
pub use super::api_tokens::Entity as ApiTokens;
pub use super::applications::Entity as Applications;
pub use super::audit_log::Entity as AuditLog;
pub use super::breaker_trips::Entity as BreakerTrips;
pub use super::catalog_meta::Entity as CatalogMeta;
pub use super::classifier_values::Entity as ClassifierValues;
pub use super::classifiers::Entity as Classifiers;
pub use super::data_queues::Entity as DataQueues;
pub use super::dead_letters::Entity as DeadLetters;
pub use super::failure_logs::Entity as FailureLogs;
pub use super::hosts::Entity as Hosts;
pub use super::launch_settings::Entity as LaunchSettings;
pub use super::nodes::Entity as Nodes;
pub use super::notifications::Entity as Notifications;
pub use super::operations::Entity as Operations;
pub use super::outbox::Entity as Outbox;
pub use super::pool_hosts::Entity as PoolHosts;
pub use super::pools::Entity as Pools;
pub use super::schedule_group_members::Entity as ScheduleGroupMembers;
pub use super::schedule_groups::Entity as ScheduleGroups;
pub use super::sessions::Entity as Sessions;
pub use super::users::Entity as Users;
