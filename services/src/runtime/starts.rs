//! Which members a batch of group fires may start, for reading no more than planning needs: a
//! fire starts its first member, or, when that member's launch setting still runs (which
//! `skip` passes over), the next one, and so on (`overlap.rs`).

use super::overlap::Busy;
use std::collections::{HashMap, HashSet};

/// The members `fires` (group, first position) may start, when the launch settings in `busy`
/// have runs and every member an earlier fire of the batch starts is treated as running
/// (whatever its policy: this only chooses what to read); and the members not yet `known`
/// (read) that decide it. Both sorted, without repeats.
pub(super) fn may_start<'a>(
    fires: impl IntoIterator<Item = (&'a str, usize)>,
    members: &'a HashMap<String, Vec<String>>,
    busy: &Busy,
    known: &HashSet<String>,
) -> (Vec<String>, Vec<String>) {
    let mut starts = Vec::new();
    let mut unknown = Vec::new();
    let mut started: HashSet<&str> = HashSet::new();
    for (group, from) in fires {
        let list = members.get(group).map(Vec::as_slice).unwrap_or_default();
        for ls in list.iter().skip(from) {
            if !known.contains(ls) {
                unknown.push(ls.clone());
                break;
            }
            starts.push(ls.clone());
            if !busy.contains(ls) && started.insert(ls) {
                break;
            }
        }
    }
    starts.sort();
    starts.dedup();
    unknown.sort();
    unknown.dedup();
    (starts, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::overlap::ActiveRun;
    use uuid::Uuid;

    fn members() -> HashMap<String, Vec<String>> {
        HashMap::from([
            ("g1".to_owned(), vec!["a".to_owned(), "b".to_owned()]),
            ("g2".to_owned(), vec!["a".to_owned(), "c".to_owned()]),
            ("g3".to_owned(), vec!["d".to_owned()]),
        ])
    }

    fn set(items: &[&str]) -> HashSet<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn first_the_first_members_are_read() {
        let m = members();
        let (starts, unknown) = may_start(
            [("g1", 0), ("g3", 0)],
            &m,
            &Busy::default(),
            &HashSet::new(),
        );
        assert!(starts.is_empty());
        assert_eq!(unknown, ["a", "d"]);
    }

    #[test]
    fn a_member_started_earlier_in_the_batch_makes_the_next_one_needed() {
        let m = members();
        let known = set(&["a", "d"]);
        let (starts, unknown) = may_start([("g1", 0), ("g2", 0)], &m, &Busy::default(), &known);
        assert_eq!(starts, ["a"]);
        assert_eq!(unknown, ["c"], "g2 meets g1's start of a");
        let known = set(&["a", "c", "d"]);
        let (starts, unknown) = may_start([("g1", 0), ("g2", 0)], &m, &Busy::default(), &known);
        assert_eq!(starts, ["a", "c"]);
        assert!(unknown.is_empty());
    }

    #[test]
    fn a_busy_member_is_passed_over_to_the_next_and_a_fire_may_start_later() {
        let m = members();
        let mut busy = Busy::default();
        busy.started(
            "a",
            ActiveRun {
                id: Uuid::nil(),
                hosts: vec![],
            },
        );
        let known = set(&["a", "b", "d"]);
        let (starts, unknown) = may_start([("g1", 0), ("g3", 0)], &m, &busy, &known);
        assert_eq!(starts, ["a", "b", "d"]);
        assert!(unknown.is_empty());
        // A re-run from the second member reads only from there.
        let (starts, _) = may_start([("g1", 1)], &m, &busy, &known);
        assert_eq!(starts, ["b"]);
    }
}
