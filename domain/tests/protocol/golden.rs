//! Golden tables of the arithmetic both sides must agree on: a retry policy's delays and the
//! wait queues they name (`protocol/golden/retry-ladders.json`), and durations as text
//! (`protocol/golden/durations.json`). Another implementation checks itself against them.

use crate::{agrees, pretty, protocol_dir};
use am_domain::{
    HumanDuration,
    catalog::RetryPolicy,
    policy::{retry_delay, retry_ladder, step_delay},
    wire::names::Names,
};
use serde_json::{Value, json};
use std::time::Duration;

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).expect("fits")
}

fn policies() -> Vec<RetryPolicy> {
    [
        (1_000, 2.0, 300_000),
        (500, 3.0, 60_000),
        (100, 2.0, 1_000),
        (250, 1.5, 10_000),
        (1_000, 1.1, 10_000),
        (750, 1.7, 120_000),
        (3_000, 2.5, 3_600_000),
        (1_000, 1.0, 300_000),
        (10_000, 2.0, 5_000),
        (333, 1.333, 4_444),
    ]
    .into_iter()
    .map(|(initial, multiplier, max)| RetryPolicy {
        initial_delay: HumanDuration::from_millis(initial),
        multiplier,
        max_delay: HumanDuration::from_millis(max),
        max_deliveries: 10,
    })
    .collect()
}

#[test]
fn the_retry_ladders_are_what_the_policy_computes() {
    let names = Names::default();
    let rows: Vec<Value> = policies()
        .iter()
        .map(|p| {
            let steps = retry_ladder(p);
            let last = steps.last().map_or(1, |s| s.attempt) + 2;
            let delays: Vec<u64> = (1..=last).map(|a| ms(retry_delay(p, a))).collect();
            for (i, d) in delays.iter().enumerate() {
                let attempt = u32::try_from(i + 1).expect("small");
                assert_eq!(
                    step_delay(&steps, attempt).map(ms),
                    Some(*d),
                    "the ladder and the formula agree at retry {attempt}"
                );
            }
            json!({
                "policy": p,
                "delays_ms": delays,
                "retry_steps": steps,
                "wait_queues": steps.iter()
                    .map(|s| names.wait(Duration::from_millis(s.delay_ms)))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    let table = json!({
        "description": "delays_ms[n-1] is the wait before retry n (the n-th failure of a message, or its n-th answer 'temporarily unavailable'): initial_delay × multiplier^(n-1) in IEEE 754 double arithmetic, truncated to whole milliseconds, at least initial_delay and at most max_delay. A launch carries the same ladder as retry_steps; a node uses those. wait_queues are the queues with the default prefix `am`.",
        "ladders": rows,
    });
    let mut mismatches = Vec::new();
    agrees(
        &protocol_dir().join("golden/retry-ladders.json"),
        &pretty(&table),
        &mut mismatches,
    );
    assert!(
        mismatches.is_empty(),
        "{mismatches:?} changed; AM_BLESS=1 to accept"
    );
}

#[test]
fn durations_read_and_write_as_the_table_says() {
    let read: Vec<Value> = [
        "0s",
        "1ms",
        "500ms",
        "1s",
        "30s",
        "90s",
        "1m",
        "5m",
        "1h",
        "1h 30m",
        "1h30m",
        "2h 15m 30s",
        "1d",
        "1day",
        "2days",
        "1w",
        "1week",
        "1M",
        "1month",
        "2months",
        "1y",
        "1year",
        "10min",
        "3sec",
        "250msec",
        "1500us",
        "2000000ns",
    ]
    .iter()
    .map(|text| {
        let d: HumanDuration = text.parse().expect(text);
        json!({"text": text, "ms": ms(d.0)})
    })
    .collect();
    let written: Vec<Value> = [
        0_u64,
        1,
        500,
        1_000,
        1_500,
        60_000,
        90_000,
        3_600_000,
        5_400_000,
        86_400_000,
        93_784_005,
        604_800_000,
        2_630_016_000,
        31_557_600_000,
    ]
    .iter()
    .map(|&n| {
        let text = HumanDuration::from_millis(n).to_string();
        assert_eq!(
            text.parse::<HumanDuration>().map(|d| ms(d.0)),
            Ok(n),
            "{text} reads back"
        );
        json!({"ms": n, "text": text})
    })
    .collect();
    let table = json!({
        "description": "Durations travel as text. `read`: what a receiver must accept and the milliseconds it means (1d = 86 400 s, 1w = 7 d, 1M = 1 month = 30.44 d = 2 630 016 s, 1y = 365.25 d = 31 557 600 s). `written`: how this implementation writes a number of milliseconds.",
        "read": read,
        "written": written,
    });
    let mut mismatches = Vec::new();
    agrees(
        &protocol_dir().join("golden/durations.json"),
        &pretty(&table),
        &mut mismatches,
    );
    assert!(
        mismatches.is_empty(),
        "{mismatches:?} changed; AM_BLESS=1 to accept"
    );
}
