//! A notification channel's fields (webhook, format, e-mail, the events each is told), and the
//! tools under an application's, launch setting's or schedule group's form: the webhook's
//! signing secret (write-only: set or removed, never shown) and *Send test* for the webhook
//! and for e-mail, each of which queues a `test` notification and shows what the endpoint (or
//! the SMTP relay) answered (docs/notifications.md).

use crate::{
    api::{
        catalog::Key,
        notifications::{SendTestNotification, SetWebhookSecret, notification},
    },
    components::forms::{FormErrors, SelectField, TextField},
};
use am_domain::{
    catalog::Channels,
    notify::{Channel, Delivery, Event, WebhookFormat},
};
use leptos::prelude::*;
use std::time::Duration;

const POLL: Duration = Duration::from_secs(1);

/// The choices of a webhook's format, as forms offer them.
pub fn webhook_formats() -> Vec<(String, String)> {
    WebhookFormat::ALL
        .iter()
        .map(|f| {
            let label = match f {
                WebhookFormat::Json => "JSON — the notice, for programs",
                WebhookFormat::Chat => "chat — {\"text\": …} for Slack or Mattermost",
            };
            (f.as_str().to_owned(), label.to_owned())
        })
        .collect()
}

/// The fields of a notification channel (an application's, a launch setting's or a schedule
/// group's own), as a form holds them.
#[derive(Clone, Copy)]
pub struct ChannelSignals {
    pub webhook: RwSignal<String>,
    pub format: RwSignal<String>,
    pub email: RwSignal<String>,
    pub webhook_events: RwSignal<Vec<Event>>,
    pub email_events: RwSignal<Vec<Event>>,
}

impl ChannelSignals {
    pub fn new(channels: &Channels) -> Self {
        Self {
            webhook: RwSignal::new(channels.webhook_url.clone().unwrap_or_default()),
            format: RwSignal::new(channels.webhook_format.as_str().to_owned()),
            email: RwSignal::new(channels.notify_email.clone().unwrap_or_default()),
            webhook_events: RwSignal::new(channels.webhook_events.clone()),
            email_events: RwSignal::new(channels.email_events.clone()),
        }
    }

    /// The channels as typed: an empty field is `None`; the secret is left out (a write
    /// without it keeps the stored one), as it is set apart ([`WebhookTools`]).
    pub fn channels(self) -> Channels {
        let typed = |text: RwSignal<String>| {
            let text = text.get_untracked();
            (!text.trim().is_empty()).then(|| text.trim().to_owned())
        };
        Channels {
            webhook_url: typed(self.webhook),
            webhook_secret: None,
            webhook_format: WebhookFormat::parse(&self.format.get_untracked()).unwrap_or_default(),
            notify_email: typed(self.email),
            webhook_events: self.webhook_events.get_untracked(),
            email_events: self.email_events.get_untracked(),
        }
    }
}

/// A channel's fields: webhook URL and format, e-mail addresses, and the events each is told.
/// `whose` names the owner in the hints ("the application", "this launch setting").
#[component]
pub fn ChannelFields(
    channels: ChannelSignals,
    errors: FormErrors,
    can_edit: bool,
    whose: &'static str,
    /// Said under the webhook field: what it overrides, or what it gets.
    webhook_hint: &'static str,
    #[prop(optional)] placeholder: &'static str,
) -> impl IntoView {
    let placeholder = if placeholder.is_empty() {
        "https://…"
    } else {
        placeholder
    };
    view! {
        <TextField label="Webhook URL" test="field-webhook" value=channels.webhook errors=errors.at("webhook_url")
            readonly=!can_edit placeholder=placeholder hint=webhook_hint />
        <SelectField label="Webhook format" test="field-webhook-format" value=channels.format options=webhook_formats()
            errors=errors.at("webhook_format") disabled=!can_edit
            hint=format!("of {whose}'s webhook; chat: a Slack- or Mattermost-compatible incoming webhook") />
        <TextField label="Notification e-mail" test="field-notify-email" value=channels.email errors=errors.at("notify_email")
            readonly=!can_edit placeholder="ops@example.com, oncall@example.com"
            hint=format!("addresses, separated by commas, that get {whose}'s notifications by e-mail (through the manager's SMTP relay)") />
        <EventChoice label="Events the webhook is told" test="field-webhook-events" value=channels.webhook_events
            errors=errors.at("webhook_events") disabled=!can_edit />
        <EventChoice label="Events the e-mail is told" test="field-email-events" value=channels.email_events
            errors=errors.at("email_events") disabled=!can_edit />
    }
}

/// The events a channel is told, as ticks: none ticked means every event (an empty list in the
/// catalog, `am_domain::notify::wants`).
#[component]
pub fn EventChoice(
    label: &'static str,
    test: &'static str,
    value: RwSignal<Vec<Event>>,
    #[prop(into, optional)] errors: Signal<Vec<String>>,
    #[prop(optional)] disabled: bool,
) -> impl IntoView {
    let choices = Event::ALL.into_iter().filter(|e| *e != Event::Test);
    view! {
        <fieldset class="field events" data-test=test aria-invalid=move || (!errors.with(Vec::is_empty)).to_string()>
            <legend class="label">{label}</legend>
            <p class="hint">"None ticked: every event."</p>
            {choices.map(|e| view! {
                <label class="check">
                    <input
                        type="checkbox"
                        data-test=format!("{test}-{}", e.as_str())
                        disabled=disabled
                        checked=value.with_untracked(|v| v.contains(&e))
                        prop:checked=move || value.with(|v| v.contains(&e))
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            value.update(|v| {
                                v.retain(|x| *x != e);
                                if on {
                                    v.push(e);
                                }
                                // In the order events are listed, whatever the clicks' order.
                                v.sort_by_key(|x| Event::ALL.iter().position(|y| y == x));
                            });
                        }
                    />
                    <span>{e.as_str()}</span>
                </label>
            }).collect_view()}
            <crate::components::forms::FieldErrors errors test />
        </fieldset>
    }
}

#[component]
pub fn WebhookTools(key: Key, can_edit: bool, can_operate: bool) -> impl IntoView {
    view! {
        <div class="card webhook-tools" data-test="webhook-tools">
            <h2>"Webhook and e-mail"</h2>
            {can_edit.then(|| view! { <Secret key=key.clone() /> })}
            {can_operate.then(|| view! {
                <SendTest key=key.clone() channel=None label="Send test" test="webhook-test" />
                <SendTest key=key.clone() channel=Some(Channel::Email) label="Send test e-mail" test="email-test" />
            })}
        </div>
    }
}

#[component]
fn Secret(key: Key) -> impl IntoView {
    let action = ServerAction::<SetWebhookSecret>::new();
    let secret = RwSignal::new(String::new());
    let send = move |value: String| {
        action.dispatch(SetWebhookSecret {
            key: key.clone(),
            secret: value,
        });
        secret.set(String::new());
    };
    let (set, remove) = (send.clone(), send);
    view! {
        <div class="inline-form">
            <label>
                <span class="label">"Signing secret"</span>
                <input type="password" autocomplete="new-password" data-test="webhook-secret"
                    placeholder="write-only: never shown again"
                    prop:value=move || secret.get() on:input=move |ev| secret.set(event_target_value(&ev)) />
            </label>
            <button type="button" class="small" data-test="webhook-secret-set"
                disabled=move || secret.with(|s| s.trim().is_empty()) || action.pending().get()
                on:click=move |_| set(secret.get_untracked())>"Set secret"</button>
            <button type="button" class="small danger" data-test="webhook-secret-remove"
                disabled=move || action.pending().get()
                on:click=move |_| remove(String::new())>"Remove secret"</button>
            {move || action.value().get().map(|r| match r {
                Ok(()) => view! { <span class="muted" role="status" data-test="webhook-secret-saved">"saved"</span> }.into_any(),
                Err(e) => view! { <span class="error" role="alert">{e.to_string()}</span> }.into_any(),
            })}
        </div>
        <p class="muted">"With a secret, each body is signed: X-Agent-Manager-Signature: sha256=<HMAC of the body>."</p>
    }
}

/// A *Send test* button for one channel (`None`: the webhook, else e-mail); `test` names its
/// parts for the browser tests (`{test}`, `{test}-answer`, `{test}-error`, `{test}-link`).
#[component]
fn SendTest(
    key: Key,
    channel: Option<Channel>,
    label: &'static str,
    test: &'static str,
) -> impl IntoView {
    let action = ServerAction::<SendTestNotification>::new();
    let go = move |_| {
        action.dispatch(SendTestNotification {
            key: key.clone(),
            channel,
        });
    };
    view! {
        <div class="inline-form">
            <button type="button" class="small" data-test=test disabled=move || action.pending().get()
                on:click=go>{label}</button>
            {move || action.value().get().map(|r| match r {
                Ok(id) => view! { <Answer id test /> }.into_any(),
                Err(e) => view! { <span class="error" role="alert" data-test=format!("{test}-error")>{e.to_string()}</span> }.into_any(),
            })}
        </div>
    }
}

/// What became of test notification `id`, read every second until its first try is over.
#[component]
fn Answer(id: i64, test: &'static str) -> impl IntoView {
    let answer = format!("{test}-answer");
    let row = Resource::new(|| (), move |_| notification(id));
    Effect::new(move |_| {
        if let Ok(handle) = set_interval_with_handle(
            move || {
                let tried = row
                    .get_untracked()
                    .and_then(Result::ok)
                    .is_some_and(|n| n.status != Delivery::Pending || n.attempts > 0);
                if !tried {
                    row.refetch();
                }
            },
            POLL,
        ) {
            on_cleanup(move || handle.clear());
        }
    });
    view! {
        <Transition fallback=|| view! { <span class="muted">"sending…"</span> }>
            {move || row.get().map(|r| match r {
                Ok(n) if n.status == Delivery::Delivered => view! {
                    <span class="good" data-test=answer.clone() data-status=Delivery::Delivered.as_str()>
                        {format!("delivered to {}{}", n.endpoint, if n.signed { ", signed" } else { "" })}
                    </span>
                }.into_any(),
                Ok(n) if n.attempts > 0 || n.status == Delivery::Failed => view! {
                    <span class="error" data-test=answer.clone() data-status=Delivery::Failed.as_str()>
                        {format!("not delivered: {}", n.last_error.unwrap_or_default())}
                    </span>
                }.into_any(),
                Ok(_) => view! { <span class="muted" data-test=answer.clone() data-status=Delivery::Pending.as_str()>"sending…"</span> }.into_any(),
                Err(e) => view! { <span class="error">{e.to_string()}</span> }.into_any(),
            })}
        </Transition>
        " " <a href=format!("/notifications#n-{id}") data-test=format!("{test}-link")>"on the Notifications page"</a>
    }
}
