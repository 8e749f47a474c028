//! Where the broker differs from what the reconciler keeps: objects the broker refused on the
//! last pass (and whether it holds them with other arguments), and objects the last sample did
//! not find although they were applied (removed outside the manager). Shown on the Broker page
//! and in `GET /api/v1/broker`.
//!
//! Objects the broker has and the catalog does not want are not listed: AMQP cannot list a
//! broker's objects (that takes the management plugin's HTTP API).

use super::Applied;
use am_domain::{
    read::{broker::Drift, depths::Depths},
    topology::{DriftState, ObjectKind},
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// An object the broker refused on a pass; it stays out of the applied state, so every pass
/// tries it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub object: ObjectKind,
    /// The exchange or queue; for a binding, its queue.
    pub name: String,
    /// The broker holds it with other arguments (PRECONDITION_FAILED on declaring).
    #[serde(default)]
    pub wrong_arguments: bool,
    pub error: String,
}

/// The differences: refusals of the last pass (at `reconciled_at`), then what the sample
/// missed among the objects still applied (a sample begun before the last pass, which may have
/// declared them again, says nothing).
pub fn drift(
    applied: &Applied,
    reconciled_at: Option<DateTime<Utc>>,
    depths: &Depths,
) -> Vec<Drift> {
    let mut out: Vec<Drift> = applied
        .refused
        .iter()
        .map(|r| Drift {
            object: r.object,
            name: r.name.clone(),
            state: if r.wrong_arguments {
                DriftState::WrongArguments
            } else {
                DriftState::Refused
            },
            detail: r.error.clone(),
        })
        .collect();
    let fresh = match (depths.sampled_at, reconciled_at) {
        (Some(sampled), Some(passed)) => sampled >= passed,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if fresh {
        out.extend(
            depths
                .missing
                .iter()
                .filter(|m| {
                    m.forwarded_by.is_some()
                        || match m.object {
                            ObjectKind::Queue => applied.objects.queues.contains_key(&m.name),
                            ObjectKind::Exchange => applied.objects.exchanges.contains_key(&m.name),
                            ObjectKind::Binding => false,
                        }
                })
                .map(|m| Drift {
                    object: m.object,
                    name: m.name.clone(),
                    state: DriftState::Missing,
                    detail: match &m.forwarded_by {
                        Some(ls) => format!(
                            "launch setting {ls} forwards its dead letters here; create it \
                             (the manager does not), its copies wait until then"
                        ),
                        None => "the next full pass declares it again (Reconcile now)".into(),
                    },
                }),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use am_domain::{
        read::depths::MissingObject,
        topology::{Queue, QueueRole},
    };
    use chrono::Duration;

    fn applied_with(queue: &str) -> Applied {
        let mut a = Applied::default();
        a.objects.add_queue(Queue {
            name: queue.into(),
            role: QueueRole::Wait,
            args: Default::default(),
        });
        a
    }

    #[test]
    fn refusals_say_whether_the_arguments_differ() {
        let a = Applied {
            refused: vec![
                Refusal {
                    object: ObjectKind::Queue,
                    name: "am.ls.a".into(),
                    wrong_arguments: true,
                    error: "PRECONDITION_FAILED - inequivalent arg 'x-queue-type'".into(),
                },
                Refusal {
                    object: ObjectKind::Binding,
                    name: "am.ls.b".into(),
                    wrong_arguments: false,
                    error: "NOT_FOUND".into(),
                },
            ],
            ..Applied::default()
        };
        let d = drift(&a, None, &Depths::default());
        assert_eq!(
            d.iter().map(|d| d.state).collect::<Vec<_>>(),
            [DriftState::WrongArguments, DriftState::Refused]
        );
    }

    #[test]
    fn only_a_sample_after_the_last_pass_can_call_an_applied_object_missing() {
        let now = Utc::now();
        let a = applied_with("am.wait.1s");
        let depths = |at| Depths {
            sampled_at: Some(at),
            missing: vec![
                MissingObject {
                    object: ObjectKind::Queue,
                    name: "am.wait.1s".into(),
                    forwarded_by: None,
                },
                // No longer applied (the catalog dropped it): not a difference.
                MissingObject {
                    object: ObjectKind::Queue,
                    name: "am.gone".into(),
                    forwarded_by: None,
                },
                // Never applied, but the catalog forwards dead letters there.
                MissingObject {
                    object: ObjectKind::Exchange,
                    name: "billing.errors".into(),
                    forwarded_by: Some("billing.import".into()),
                },
            ],
            ..Depths::default()
        };
        let found = drift(&a, Some(now), &depths(now + Duration::seconds(1)));
        assert_eq!(
            found
                .iter()
                .map(|d| (d.name.as_str(), d.state))
                .collect::<Vec<_>>(),
            [
                ("am.wait.1s", DriftState::Missing),
                ("billing.errors", DriftState::Missing)
            ]
        );
        assert!(found[1].detail.contains("billing.import"), "{found:?}");
        // Sampled before the pass that may have declared it again.
        assert!(drift(&a, Some(now), &depths(now - Duration::seconds(1))).is_empty());
    }
}
