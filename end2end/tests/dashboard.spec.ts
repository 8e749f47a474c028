import { APIResponse, expect, Page, test } from "@playwright/test";
import { loginAdmin, open, t, uid } from "./catalog-helpers";
import { startProducer, stopProducer } from "./producer";

// A real demo node (started by scripts/e2e.sh) serves this application on this host: its `fail`
// agent always fails (error type DemoFailure), its `poison` agent fails on messages saying
// "poison".
const APP = process.env.E2E_NODE_APP ?? "e2e-demo";
const HOST = process.env.E2E_NODE_HOST ?? "e2e-node-a";

async function call(page: Page, method: string, path: string, body?: unknown): Promise<APIResponse> {
  const origin = new URL(page.url()).origin;
  return page.request.fetch(`${origin}${path}`, {
    method,
    headers: { Origin: origin, "Content-Type": "application/json" },
    data: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Adds the node's application and pool to `catalog` unless it has them. */
function withNodeApp(catalog: any) {
  if (!catalog.applications.some((a: { id: string }) => a.id === APP)) {
    catalog.pools.push({ id: `${APP}-pool`, title: "The e2e node", hosts: [HOST] });
    catalog.applications.push({ id: APP, title: "E2E demo node", default_pool: `${APP}-pool` });
  }
}

async function put(page: Page, catalog: unknown) {
  const r = await call(page, "PUT", "/api/v1/catalog", catalog);
  expect(r.status(), await r.text()).toBe(200);
}

/** Adds launch setting `ls` of the node's `fail` agent, in a group that fires once a year. */
async function addFailing(page: Page, ls: string) {
  const catalog = await (await call(page, "GET", "/api/v1/catalog")).json();
  withNodeApp(catalog);
  if (!catalog.agents.some((a: { application: string; id: string }) => a.application === APP && a.id === "fail")) {
    catalog.agents.push({
      application: APP, id: "fail", title: "Fail", input: "standalone", concurrency: "ANY", overlap: "allow",
    });
  }
  catalog.launch_settings.push({ id: ls, application: APP, agent: "fail", kind: "scheduled" });
  catalog.schedule_groups.push({ id: `${ls}-group`, application: APP, cron: "0 0 1 1 *", time_zone: "UTC", members: [ls] });
  await put(page, catalog);
}

/** The number a figure carries in its `data-count` attribute. */
async function count(page: Page, selector: string): Promise<number> {
  return Number(await page.locator(selector).getAttribute("data-count"));
}

/** Marks the window, to tell later that the page was never reloaded. */
async function mark(page: Page) {
  await page.evaluate(() => {
    (window as unknown as { dashboardMark: string }).dashboardMark = "not reloaded";
  });
}

async function stillMarked(page: Page) {
  expect(await page.evaluate(() => (window as unknown as { dashboardMark?: string }).dashboardMark)).toBe(
    "not reloaded",
  );
}

test("the dashboard updates without reload", async ({ page }) => {
  // The run on the real node may take a while on a busy machine.
  test.setTimeout(90_000);
  await loginAdmin(page);
  const ls = `${APP}.${uid("dash")}`;
  await addFailing(page, ls);

  await open(page, "/");
  await expect(page.locator(t("live-state"))).toHaveAttribute("data-state", "live");
  // The real node is among the live nodes.
  await expect(page.locator(`${t("node-load")}[data-host="${HOST}"]`)).toBeVisible();
  await mark(page);
  const failed = `${t("status-count")}[data-status="failed"]`;
  const failedBefore = await count(page, failed);
  const failuresBefore = Number(await page.locator(t("failure-chart")).getAttribute("data-total"));
  const lastHourBefore = await count(page, t("failures-last-hour"));

  // Run it through the API, as another operator would: the node fails it and reports.
  const run = await call(page, "POST", `/api/v1/launch-settings/${ls}/run`);
  expect(run.status(), await run.text()).toBe(202);

  await expect.poll(() => count(page, failed), { timeout: 45_000 }).toBeGreaterThan(failedBefore);
  await expect
    .poll(async () => Number(await page.locator(t("failure-chart")).getAttribute("data-total")))
    .toBeGreaterThan(failuresBefore);
  expect(await count(page, t("failures-last-hour"))).toBeGreaterThan(lastHourBefore);
  await expect(page.locator(`${t("legend-item")}[data-error-type="DemoFailure"]`)).toBeVisible();
  // The current hour's bar has a DemoFailure segment titled for screen readers.
  await expect(page.locator(`${t("chart-hour")}:last-of-type rect[data-error-type="DemoFailure"] title`)).toContainText(
    "DemoFailure",
  );
  // What failed, on the dashboard itself: the launch setting, its last error and host, since when.
  const failing = page.locator(`${t("failing-row")}[data-id="${ls}"]`);
  await expect(failing).toBeVisible();
  await expect(failing.locator(t("failing-error"))).toContainText("DemoFailure");
  await expect(failing.locator(t("failing-message"))).not.toBeEmpty();
  await expect(failing.locator(t("failing-hosts"))).toContainText(HOST);
  await expect(failing.locator(`${t("failing-since")} time`)).toHaveAttribute("datetime", /T/);
  await stillMarked(page);
  await expect(page).toHaveURL(/\/$/);
  // The launch settings list says it failed lately.
  await open(page, `/launch-settings?q=${encodeURIComponent(ls)}`);
  await expect(page.locator(`${t("list-row")}[data-id="${ls}"] td[data-label="Last run"]`)).toContainText("24 h: 1 failure");
  await open(page, "/");
  // One click to the drill-down of that launch setting.
  await failing.locator(t("failing-link")).click();
  await expect(page).toHaveURL(new RegExp(`/failures/${ls.replace(/\./g, "\\.")}$`));
});

test("re-enable a tripped LS", async ({ page }) => {
  test.setTimeout(120_000);
  await loginAdmin(page);
  const id = uid("trip");
  const ls = `${APP}.${id}`;
  // The data queue's address is its id: an exchange of this test alone.
  const queue = `${APP}.${id}.in`;
  const catalog = await (await call(page, "GET", "/api/v1/catalog")).json();
  withNodeApp(catalog);
  catalog.data_queues.push({ id: queue, title: "Events of the breaker test", kind: "topic" });
  const poison = catalog.agents.find((a: { application: string; id: string }) => a.application === APP && a.id === "poison");
  if (poison) {
    poison.data_queue = queue;
  } else {
    catalog.agents.push({
      application: APP, id: "poison", title: "Poison", input: "messages", data_queue: queue,
      concurrency: "ANY", overlap: "allow",
    });
  }
  // A breaker threshold of 1: the first poisoned message trips it, and `ANY` disables the LS.
  catalog.launch_settings.push({
    id: ls, application: APP, agent: "poison", kind: "stream", stream_mode: "asap", failure_threshold: 1,
    retry: { initial_delay: "200ms", multiplier: 2.0, max_delay: "1s", max_deliveries: 3 },
  });
  await put(page, catalog);

  await open(page, "/");
  await expect(page.locator(t("live-state"))).toHaveAttribute("data-state", "live");
  await mark(page);
  const row = page.locator(`${t("disabled-ls")}[data-id="${ls}"]`);
  await expect(row).toHaveCount(0);

  // Events flow to the stream on the real node; the fourth is poisoned.
  const producer = startProducer(queue, id, 250);
  try {
    await expect(row).toBeVisible({ timeout: 60_000 });
  } finally {
    await stopProducer(producer);
  }
  // Shown live with the breaker's reason.
  await expect(row.locator(t("disabled-reason"))).toContainText(`breaker tripped on ${HOST} for ${ls}`);
  await expect(row.locator(t("disabled-reason"))).toContainText("poison");
  await stillMarked(page);
  expect(await count(page, t("disabled"))).toBeGreaterThanOrEqual(1);

  // The operator fixes the cause first (the poisoned messages still wait in the subscription:
  // with a threshold of 1 they would trip it again at once) ...
  const saved = await (await call(page, "GET", `/api/v1/launch-settings/${ls}`)).json();
  expect(saved.enabled).toBe(false);
  const fixed = await call(page, "PUT", `/api/v1/launch-settings/${ls}`, { ...saved, failure_threshold: 100 });
  expect(fixed.status(), await fixed.text()).toBe(200);

  // Who disabled it and the activation that tripped the breaker are one click away.
  await expect(row.locator(t("disabled-by"))).toHaveText("breaker");
  await expect(row.locator(t("disabled-activation"))).toHaveAttribute("href", /^\/activations\/[0-9a-f-]{36}$/);
  await expect(row.locator(t("disabled-link"))).toHaveAttribute("href", `/launch-settings/${ls}`);

  // ... then enables it from the dashboard, one click.
  await row.locator(t("enable")).click();
  await expect(row).toHaveCount(0, { timeout: 15_000 });
  const after = await (await call(page, "GET", `/api/v1/launch-settings/${ls}`)).json();
  expect(after.enabled ?? true).toBe(true);

  // A reload does not list it either.
  await page.reload();
  await expect(page.locator(t("live-state"))).toHaveAttribute("data-state", "live");
  await expect(page.locator(`${t("disabled-ls")}[data-id="${ls}"]`)).toHaveCount(0);

  // Its page shows how the stream is doing instead of "no activation yet": failures and dead
  // letters of the last hour, the last failure. The breaker tripped on retried attempts; once
  // enabled, the poisoned message's last attempt is dead-lettered: a real failure.
  await open(page, `/launch-settings/${ls}`);
  const health = page.locator(t("stream-health"));
  await expect(health).toBeVisible();
  const lastHour = health.locator(t("stream-1h"));
  // The failure report and the dead letter come by two ways (the node's report, the broker's
  // dead-letter queue): each is waited for.
  await expect
    .poll(async () => {
      await page.reload();
      return Math.min(
        Number(await lastHour.getAttribute("data-failed")),
        Number(await lastHour.getAttribute("data-dead-lettered")),
      );
    }, { timeout: 30_000 })
    .toBeGreaterThanOrEqual(1);
  expect(Number(await lastHour.getAttribute("data-retried"))).toBeGreaterThanOrEqual(1);
  await expect(health.locator(t("stream-last-failure"))).toContainText("Poisoned");
  await expect(health.locator(t("stream-failing-since"))).toBeVisible();

  // Its history tells who did what and why: the breaker's disable with its cause, the admin's
  // edit and enable (from this browser's address), the creation.
  await page.locator(t("history-link")).click();
  await expect(page).toHaveURL(`/audit?entity_type=launch_setting&entity_id=${encodeURIComponent(ls)}`);
  const entry = (actor: string, action: string) =>
    page.locator(`${t("audit-row")}[data-actor="${actor}"][data-action="${action}"]`);
  const disabled = entry("breaker", "update");
  await expect(disabled).toHaveCount(1);
  await expect(disabled.locator(t("audit-cause"))).toContainText(`breaker tripped on ${HOST}`);
  await expect(disabled.locator(`${t("audit-change")}[data-path="enabled"] ${t("audit-after")}`)).toHaveText("false");
  const edit = entry("admin", "update").filter({ has: page.locator(`${t("audit-change")}[data-path="failure_threshold"]`) });
  await expect(edit.locator(`${t("audit-change")}[data-path="failure_threshold"] ${t("audit-before")}`)).toHaveText("1");
  await expect(edit.locator(`${t("audit-change")}[data-path="failure_threshold"] ${t("audit-after")}`)).toHaveText("100");
  await expect(entry("admin", "update").filter({ hasText: "enabled by admin" }).locator(t("audit-address"))).toHaveText(/\d/);
  await expect(entry("admin", "create")).toHaveCount(1);

  // Filtered to one actor from the page's own form: only the breaker's entry is left.
  await page.locator(t("filter-actor")).fill("breaker");
  await page.locator(t("filter-apply")).click();
  await expect(page).toHaveURL(/actor=breaker/);
  await expect(page.locator(t("audit-row"))).toHaveCount(1);
  await expect(page.locator(t("audit-export"))).toHaveAttribute("href", /\/api\/v1\/audit\/export\?actor=breaker&/);
});

test("every figure of the dashboard leads to a list of as many items", async ({ page }) => {
  // After the tests above: failures, retried attempts, a dead letter and finished runs exist.
  test.setTimeout(120_000);
  await loginAdmin(page);
  await open(page, "/");
  const statuses = await page.locator(t("status-count")).evaluateAll((els) => els.map((e) => e.getAttribute("data-status")!));
  expect(statuses.length).toBeGreaterThan(3);
  // [the figure (its data-count), its link, the count on the list the link opens]
  const figures: [string, string, string][] = [
    [t("failures-last-hour"), t("failures-link"), t("level-total")],
    [t("dead-letters"), t("dead-letters-link"), t("dl-total")],
    ...statuses.map((s): [string, string, string] => {
      const figure = `${t("status-count")}[data-status="${s}"]`;
      return [figure, `${figure} a`, t("activations-total")];
    }),
  ];
  let besides = 0;
  for (const kind of ["retried", "unavailable"]) {
    const figure = `${t("besides-kind")}[data-kind="${kind}"]`;
    if ((await page.locator(figure).count()) > 0) {
      besides += 1;
      figures.push([figure, figure, t("level-total")]);
    }
  }
  // The poisoned messages of the breaker test were retried before they were dead-lettered.
  expect(besides).toBe(2);
  const listed = async (selector: string) => {
    const el = page.locator(selector);
    return Number((await el.getAttribute("data-count")) ?? (await el.textContent()));
  };
  for (const [figure, link, total] of figures) {
    // Runs move between statuses while the test reads: a figure and its list agree once
    // nothing moved between the two reads.
    let seen = "";
    for (let attempt = 0; attempt < 5; attempt++) {
      await open(page, "/");
      const shown = Number(await page.locator(figure).getAttribute("data-count"));
      const href = await page.locator(link).getAttribute("href");
      expect(href, figure).toBeTruthy();
      await open(page, href!);
      const counted = await listed(total);
      seen = `${figure}: ${shown} on the dashboard, ${counted} at ${href}`;
      if (shown === counted) break;
    }
    const [, dash, list] = seen.match(/: (\d+) on the dashboard, (\d+) at/)!;
    expect(Number(list), seen).toBe(Number(dash));
  }
});

test("the activations list follows runs live and holds still when paused", async ({ page }) => {
  test.setTimeout(120_000);
  await loginAdmin(page);
  const ls = `${APP}.${uid("live")}`;
  await addFailing(page, ls);

  await open(page, `/activations?launch_setting=${encodeURIComponent(ls)}`);
  const total = page.locator(t("activations-total"));
  await expect(total).toHaveAttribute("data-count", "0");
  await expect(page.locator(t("live-list"))).toHaveAttribute("data-state", "live");
  await mark(page);
  const run = async () => {
    const r = await call(page, "POST", `/api/v1/launch-settings/${ls}/run`);
    expect(r.status(), await r.text()).toBe(202);
  };

  // A run started elsewhere shows up, and ends, without a reload.
  await run();
  await expect(total).toHaveAttribute("data-count", "1", { timeout: 45_000 });
  await expect(page.locator(`${t("activation-list")} .pill.failed`)).toHaveCount(1, { timeout: 45_000 });

  // Paused, the list stays as it is while the next run fails.
  await page.locator(t("live-toggle")).click();
  await expect(page.locator(t("live-list"))).toHaveAttribute("data-state", "paused");
  await expect(page.locator(t("live-toggle"))).toHaveAttribute("aria-pressed", "true");
  await run();
  const second = async () =>
    Number((await (await call(page, "GET", `/api/v1/activations?launch_setting=${encodeURIComponent(ls)}`)).json()).total);
  await expect.poll(second, { timeout: 45_000 }).toBe(2);
  // Two feed messages later (one every 2 s), still the page as paused.
  await page.waitForTimeout(4_500);
  await expect(total).toHaveAttribute("data-count", "1");

  // Resumed, what it missed comes at once.
  await page.locator(t("live-toggle")).click();
  await expect(total).toHaveAttribute("data-count", "2", { timeout: 10_000 });
  await stillMarked(page);
});
