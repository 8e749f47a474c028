//! What needs the on-call operator, at the top of the dashboard: what is disabled (who did it,
//! when, why, the activation that tripped the breaker, and *Enable* for operators) and which
//! launch settings fail now (the last error, its host, since when), each one click from the
//! page that explains it.

use crate::{
    api::catalog::{Key, SetEnabled},
    components::{
        failures::level_path,
        ids::Id,
        when::{Ago, When},
    },
};
use am_domain::{
    dashboard::{Disabled, Failing},
    display::plural,
};
use chrono::{DateTime, Utc};
use leptos::prelude::*;

/// The disabled launch settings and groups, the most recently disabled first.
#[component]
pub fn DisabledBanner(
    launch_settings: Vec<Disabled>,
    launch_settings_total: u64,
    groups: Vec<Disabled>,
    groups_total: u64,
    now: DateTime<Utc>,
    can_operate: bool,
) -> impl IntoView {
    if launch_settings.is_empty() && groups.is_empty() {
        return ().into_any();
    }
    let enable = ServerAction::<SetEnabled>::new();
    let rows = launch_settings
        .into_iter()
        .map(|d| (d, "launch setting", "/launch-settings"))
        .chain(
            groups
                .into_iter()
                .map(|d| (d, "schedule group", "/schedule-groups")),
        )
        .map(|(d, kind, path)| view! { <DisabledItem d kind path now can_operate enable /> })
        .collect_view();
    let total = launch_settings_total + groups_total;
    view! {
        <div class="card attention bad" data-test="disabled" data-count=launch_settings_total.to_string()
            data-groups=groups_total.to_string() role="region" aria-label="Disabled">
            <h2>{format!("Disabled ({total})")}</h2>
            <ul class="disabled-list">{rows}</ul>
            {move || enable.value().get().and_then(Result::err).map(|e| view! {
                <p class="error" role="alert">{e.to_string()}</p>
            })}
            {(total > 0).then(|| view! {
                <p class="hint">
                    <a href="/launch-settings">"All launch settings"</a> " · "
                    <a href="/schedule-groups">"All schedule groups"</a>
                </p>
            })}
        </div>
    }
    .into_any()
}

#[component]
fn DisabledItem(
    d: Disabled,
    kind: &'static str,
    path: &'static str,
    now: DateTime<Utc>,
    can_operate: bool,
    enable: ServerAction<SetEnabled>,
) -> impl IntoView {
    let test = if kind == "launch setting" {
        "disabled-ls"
    } else {
        "disabled-group"
    };
    let key = if kind == "launch setting" {
        Key::LaunchSetting(d.id.clone())
    } else {
        Key::ScheduleGroup(d.id.clone())
    };
    let reason = d
        .reason
        .clone()
        .unwrap_or_else(|| "no reason recorded".into());
    view! {
        <li data-test=test data-id=d.id.clone()>
            <div class="item-head">
                <span class="muted">{kind} " "</span>
                <a href=format!("{path}/{}", d.id) data-test="disabled-link"><code>{d.id.clone()}</code></a>
                " " <span class="muted">{d.application.clone()}</span>
                {d.disabled_at.map(|t| view! { " · disabled " <When at=t now /> })}
                {d.by.clone().map(|b| view! { " by " <strong data-test="disabled-by">{b}</strong> })}
                {can_operate.then(|| view! {
                    " "
                    <button type="button" class="small" data-test="enable"
                        disabled=move || enable.pending().get()
                        on:click=move |_| { enable.dispatch(SetEnabled { key: key.clone(), enabled: true }); }>
                        "Enable"
                    </button>
                })}
            </div>
            <p class="reason" data-test="disabled-reason">{reason}</p>
            {d.activation.clone().map(|a| view! {
                <p class="links"><a href=format!("/activations/{a}") data-test="disabled-activation">
                    "The activation that tripped the breaker"
                </a></p>
            })}
        </li>
    }
}

/// The launch settings with real failures in the last hour, the most recently failing first.
#[component]
pub fn FailingNow(rows: Vec<Failing>, total: u64, now: DateTime<Utc>) -> impl IntoView {
    if rows.is_empty() {
        return view! {
            <div class="card" data-test="failing" data-count="0">
                <h2>"Failing now"</h2>
                <p class="muted" data-test="no-failing">"No launch setting failed in the last hour."</p>
            </div>
        }
        .into_any();
    }
    let more = (total > rows.len() as u64).then(|| {
        view! {
            <p class="hint">{format!("The {} most recently failing of {total}. ", rows.len())}
                <a href="/failures">"All failures"</a></p>
        }
    });
    view! {
        <div class="card" data-test="failing" data-count=total.to_string()>
            <h2>"Failing now " <span class="muted">"(real failures, last hour)"</span></h2>
            <div class="table-wrap">
                <table class="list compact">
                    <thead><tr>
                        <th>"Launch setting"</th><th>"Last error"</th><th>"Hosts"</th>
                        <th>"Last"</th><th>"Failing since"</th><th>"Failures"</th>
                    </tr></thead>
                    <tbody>
                        {rows.into_iter().map(|f| view! { <FailingRow f now /> }).collect_view()}
                    </tbody>
                </table>
            </div>
            {more}
        </div>
    }
    .into_any()
}

#[component]
fn FailingRow(f: Failing, now: DateTime<Utc>) -> impl IntoView {
    let drill = level_path(&f.launch_setting, "", "");
    let last = level_path(&f.launch_setting, &f.last_activation, &f.last_host);
    view! {
        <tr data-test="failing-row" data-id=f.launch_setting.clone()>
            <td data-label="Launch setting">
                <a href=drill data-test="failing-link"><code><Id id=f.launch_setting.clone() /></code></a>
                {f.application.clone().map(|a| view! { <br /><span class="muted">{a}</span> })}
            </td>
            <td data-label="Last error" class="error-cell">
                <a href=last data-test="failing-error"><strong>{f.last_error_type.clone()}</strong></a>
                <span class="message" data-test="failing-message">{f.last_message.clone()}</span>
            </td>
            <td data-label="Hosts" data-test="failing-hosts">{f.hosts.join(", ")}</td>
            <td data-label="Last"><Ago at=f.last_at now /></td>
            <td data-label="Failing since" data-test="failing-since"><Ago at=f.failing_since now /></td>
            <td data-label="Failures">{plural(f.failures, "failure")}</td>
        </tr>
    }
}
