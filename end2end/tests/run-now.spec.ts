import { APIResponse, expect, Page, test } from "@playwright/test";
import { loginAdmin, open, t, uid } from "./catalog-helpers";

// A real demo node (started by scripts/e2e.sh) serves this application on this host.
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

/** The node's application with a sleep launch setting in a group of its own. */
async function seedRunnable(page: Page, ls: string, group: string, duration = "1s") {
  const catalog = await (await call(page, "GET", "/api/v1/catalog")).json();
  if (!catalog.applications.some((a: { id: string }) => a.id === APP)) {
    catalog.pools.push({ id: `${APP}-pool`, title: "The e2e node", hosts: [HOST] });
    catalog.applications.push({ id: APP, title: "E2E demo node", default_pool: `${APP}-pool` });
  }
  const sleep = catalog.agents.find((a: { application: string; id: string }) => a.application === APP && a.id === "sleep");
  if (!sleep) {
    catalog.agents.push({
      application: APP, id: "sleep", title: "Sleep", input: "standalone", concurrency: "ANY", overlap: "allow",
      parameters: [{ name: "duration", type: "duration", default: "10s" }],
    });
  } else {
    // Another spec may have made it first (or the node's publication did): these tests start
    // runs of one launch setting side by side.
    sleep.overlap = "allow";
  }
  catalog.launch_settings.push({ id: ls, application: APP, agent: "sleep", kind: "scheduled", parameters: { duration } });
  catalog.schedule_groups.push({ id: group, application: APP, cron: "0 0 1 1 *", time_zone: "UTC", members: [ls] });
  const put = await call(page, "PUT", "/api/v1/catalog", catalog);
  expect(put.status(), await put.text()).toBe(200);
}

test("run now starts an activation on a live node and its result shows up", async ({ page }) => {
  await loginAdmin(page);
  const id = uid("run");
  const ls = `${APP}.${id}`;
  const group = `${APP}.${id}-group`;
  await seedRunnable(page, ls, group);

  await open(page, `/launch-settings/${ls}`);
  await expect(page.locator(t("current-status"))).toHaveText("waiting");
  await page.locator(t("run-now")).click();
  await expect(page.locator(t("run-started"))).toContainText("Started activation");
  // The node sleeps one second and reports; the page shows the result after a reload.
  await expect(async () => {
    await page.reload();
    await expect(page.locator(t("last-result"))).toHaveText("succeeded", { timeout: 1000 });
  }).toPass({ timeout: 45_000 });

  // A group runs too, and a disabled one refuses with a clear message.
  await open(page, `/schedule-groups/${group}`);
  await page.locator(t("run-now")).click();
  await expect(page.locator(t("run-started"))).toContainText("Started activation");
  await expect(async () => {
    await page.reload();
    await expect(page.locator(t("last-result"))).toHaveText("succeeded", { timeout: 1000 });
  }).toPass({ timeout: 45_000 });
  const refused = await call(page, "POST", `/api/v1/schedule-groups/${group}/disable`);
  expect(refused.status()).toBe(204);
  const run = await call(page, "POST", `/api/v1/schedule-groups/${group}/run`);
  expect(run.status()).toBe(409);
  expect(await run.text()).toContain("disabled");
});

test("a run's shortened id shows the whole id on hover, copies it whole, and is found by the search as shown", async ({ page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await loginAdmin(page);
  const id = uid("ids");
  const ls = `${APP}.${id}`;
  await seedRunnable(page, ls, `${APP}.${id}-group`);
  await open(page, `/launch-settings/${ls}`);
  await page.locator(t("run-now")).click();
  await expect(page.locator(t("run-started"))).toContainText("Started activation");

  await open(page, `/activations?launch_setting=${ls}`);
  const row = page.locator(t("activation-row")).first();
  const full = (await row.getAttribute("data-id")) ?? "";
  expect(full).toMatch(/^[0-9a-f-]{36}$/);
  const code = row.locator(".short-id code");
  const shown = (await code.textContent()) ?? "";
  expect(shown).toBe(`${full.slice(0, 8)}…${full.slice(-4)}`);
  await expect(code).toHaveAttribute("title", full);
  await row.locator(t("copy-id")).click();
  await expect(row.locator(t("copy-id"))).toHaveAttribute("aria-label", "Copied");
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(full);

  // As shown, and by its first digits: listed (a shortened id names no run whole).
  for (const typed of [shown, full.slice(0, 13)]) {
    await open(page, `/search?q=${encodeURIComponent(typed)}`);
    await expect(page.locator(`${t("hit")}[data-kind="activation"][data-id="${full}"]`), typed).toBeVisible();
  }
  // Whole: straight to it.
  await open(page, `/search?q=${full}`);
  await expect(page).toHaveURL(new RegExp(`/activations/${full}$`));
});

test("a failed group is re-run from its failed member, and the member that succeeded is not run again", async ({ page }) => {
  await loginAdmin(page);
  const id = uid("rerun");
  const first = `${APP}.${id}-first`;
  const failing = `${APP}.${id}-failing`;
  const group = `${APP}.${id}-group`;
  await seedRunnable(page, first, group);
  // A second member that always fails; its breaker stays out of the way.
  const catalog = await (await call(page, "GET", "/api/v1/catalog")).json();
  if (!catalog.agents.some((a: { application: string; id: string }) => a.application === APP && a.id === "fail")) {
    catalog.agents.push({ application: APP, id: "fail", title: "Fail", input: "standalone", concurrency: "ANY", overlap: "allow", parameters: [] });
  }
  catalog.launch_settings.push({ id: failing, application: APP, agent: "fail", kind: "scheduled", parameters: {}, failure_threshold: 100 });
  catalog.schedule_groups.find((g: { id: string }) => g.id === group).members.push(failing);
  const put = await call(page, "PUT", "/api/v1/catalog", catalog);
  expect(put.status(), await put.text()).toBe(200);

  const run = await call(page, "POST", `/api/v1/schedule-groups/${group}/run`);
  expect(run.status(), await run.text()).toBe(202);
  const activation = (await run.json()).activation;
  await open(page, `/activations/${activation}`);
  await expect(async () => {
    await page.reload();
    await expect(page.locator(t("activation-status"))).toHaveText("failed", { timeout: 1000 });
  }).toPass({ timeout: 45_000 });
  await expect(page.locator(t("member-row"))).toHaveCount(2);

  // The re-run starts from the member that failed, chosen already.
  await expect(page.locator(t("rerun-from"))).toHaveValue("1");
  await page.locator(t("rerun")).click();
  const link = page.locator(t("rerun-started-link"));
  await expect(link).toBeVisible();
  await link.click();
  await expect(page.locator(t("activation-trigger"))).toContainText("rerun");
  await expect(async () => {
    await page.reload();
    await expect(page.locator(t("activation-status"))).toHaveText("failed", { timeout: 1000 });
  }).toPass({ timeout: 45_000 });
  const rows = page.locator(t("member-row"));
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText(failing);
  await expect(rows.first()).not.toContainText(first);
  await expect(page.locator(t("timeline"))).toContainText(`re-run of ${activation}`);
});

test("a running activation is interrupted from its row, then re-run from the same row, each with its outcome", async ({ page }) => {
  test.setTimeout(120_000);
  await loginAdmin(page);
  const id = uid("rows");
  const ls = `${APP}.${id}`;
  await seedRunnable(page, ls, `${APP}.${id}-group`, "60s");
  const started = await call(page, "POST", `/api/v1/launch-settings/${ls}/run`);
  expect(started.status(), await started.text()).toBe(202);
  const { activation } = await started.json();

  // Running on the node: the row offers Interrupt, asked twice.
  await expect(async () => {
    await open(page, `/activations?launch_setting=${ls}`);
    await expect(page.locator(`${t("activation-row")}[data-id="${activation}"]`)).toHaveAttribute("data-status", "running", { timeout: 1000 });
  }).toPass({ timeout: 45_000 });
  const row = page.locator(`${t("activation-row")}[data-id="${activation}"]`);
  await row.locator(t("interrupt")).click();
  await row.locator(t("interrupt-yes")).click();
  // The outcome, in place: the node stops the sleep and reports it interrupted.
  await expect(row.locator(`${t("interrupt-requested")} ${t("run-outcome")}`)).toHaveAttribute("data-status", "interrupted", { timeout: 30_000 });
  // The live list does not sweep the result away: it says it holds.
  await expect(page.locator(t("live-list"))).toHaveAttribute("data-state", "held", { timeout: 10_000 });

  // After a reload the row offers Re-run; the new run's status follows in place.
  await open(page, `/activations?launch_setting=${ls}`);
  const ended = page.locator(`${t("activation-row")}[data-id="${activation}"]`);
  await expect(ended).toHaveAttribute("data-status", "interrupted");
  await ended.locator(t("row-rerun")).click();
  const outcome = ended.locator(`${t("row-rerun-started")} ${t("run-outcome")}`);
  await expect(outcome).toHaveAttribute("data-status", /^(dispatched|running)$/, { timeout: 30_000 });
  await expect(ended.locator(t("row-rerun-link"))).toHaveAttribute("href", /^\/activations\/[0-9a-f-]{36}$/);
  // Interrupted from the API too; the re-run ends interrupted and a second interrupt is refused.
  const href = await ended.locator(t("row-rerun-link")).getAttribute("href");
  const rerun = href!.split("/").pop();
  const stop = await call(page, "POST", `/api/v1/activations/${rerun}/interrupt`);
  expect(stop.status(), await stop.text()).toBe(202);
  await expect(outcome).toHaveAttribute("data-status", "interrupted", { timeout: 30_000 });
  const again = await call(page, "POST", `/api/v1/activations/${rerun}/interrupt`);
  expect(again.status()).toBe(409);
});

test("a launch setting's row runs it now, disables it only when asked, and enables it again, each outcome on the row", async ({ page }) => {
  await loginAdmin(page);
  const id = uid("row");
  const ls = `${APP}.${id}`;
  const group = `${APP}.${id}-group`;
  await seedRunnable(page, ls, group);

  await open(page, `/launch-settings?q=${id}`);
  const row = page.locator(`${t("list-row")}[data-id="${ls}"]`);
  await row.locator(t("row-run-now")).click();
  // The outcome takes focus and follows the run to its end.
  const outcome = row.locator(t("row-outcome"));
  await expect(outcome).toBeFocused();
  await expect(outcome.locator(t("run-outcome"))).toHaveAttribute("data-status", "succeeded", { timeout: 45_000 });
  const started = await outcome.locator(t("row-run-link")).getAttribute("href");
  expect(started).toMatch(/^\/activations\/[0-9a-f-]{36}$/);

  // Disable asks first; Esc (or Cancel) leaves it enabled.
  await row.locator(t("row-toggle")).click();
  await expect(row.locator(t("row-disable-ask"))).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(row.locator(t("row-disable-ask"))).toHaveCount(0);
  await expect(row.locator(t("list-badge")).first()).not.toHaveText("disabled");
  await row.locator(t("row-toggle")).click();
  await row.locator(t("row-disable-yes")).click();
  await expect(row.locator(t("row-outcome"))).toContainText("disabled");
  // The list was read again: the row says disabled and offers Enable, without Run now.
  await expect(row.locator(t("list-badge")).first()).toHaveText("disabled");
  await expect(row.locator(t("row-run-now"))).toHaveCount(0);
  await expect(row.locator(t("row-toggle"))).toHaveText("Enable");
  const api = await call(page, "GET", `/api/v1/launch-settings/${ls}`);
  expect((await api.json()).enabled).toBe(false);
  await row.locator(t("row-toggle")).click();
  await expect(row.locator(t("row-outcome"))).toHaveText("enabled");
  await expect(row.locator(t("row-toggle"))).toHaveText("Disable…");
  // `enabled` is left out of documents while it is true.
  expect((await (await call(page, "GET", `/api/v1/launch-settings/${ls}`)).json()).enabled).toBeUndefined();
});

test("the runs a search matches are interrupted in bulk only after a question with their count", async ({ page }) => {
  await loginAdmin(page);
  const id = uid("bulkint");
  const ls = `${APP}.${id}`;
  const group = `${APP}.${id}-group`;
  await seedRunnable(page, ls, group, "60s");
  for (let i = 0; i < 2; i++) {
    const run = await call(page, "POST", `/api/v1/launch-settings/${ls}/run`);
    expect(run.status(), await run.text()).toBe(202);
  }
  const statuses = async () => {
    const r = await call(page, "GET", `/api/v1/activations?launch_setting=${encodeURIComponent(ls)}`);
    return ((await r.json()).items as { status: string }[]).map((a) => a.status).sort();
  };

  await open(page, `/activations?launch_setting=${encodeURIComponent(ls)}`);
  await page.locator(t("interrupt-matching-button")).click();
  const question = page.locator(t("interrupt-question"));
  await expect(question).toHaveAttribute("data-count", "2");
  // Cancel starts nothing.
  await page.locator(t("interrupt-matching-cancel")).click();
  await expect(page.locator(t("interrupt-matching-ask"))).toHaveCount(0);
  expect((await statuses()).every((s) => s !== "interrupted")).toBe(true);

  await page.locator(t("interrupt-matching-button")).click();
  await expect(question).toHaveAttribute("data-count", "2");
  await page.locator(t("interrupt-matching-confirm")).click();
  const progress = page.locator(`${t("bulk-operation")} ${t("operation-progress")}`);
  await expect(progress).toHaveAttribute("data-status", "succeeded", { timeout: 30_000 });
  await expect(progress).toHaveAttribute("data-total", "2");
  await expect(async () => {
    expect(await statuses()).toEqual(["interrupted", "interrupted"]);
  }).toPass({ timeout: 30_000 });
  // Nothing is left to interrupt: the question says so.
  await page.reload();
  await page.locator(t("interrupt-matching-button")).click();
  await expect(question).toHaveAttribute("data-count", "0");
});

test("launch settings selected on their list are disabled, enabled and run in bulk, each asked with the count", async ({ page }) => {
  await loginAdmin(page);
  const id = uid("bulk");
  const [a, b] = [`${APP}.${id}-a`, `${APP}.${id}-b`];
  await seedRunnable(page, a, `${a}-group`);
  await seedRunnable(page, b, `${b}-group`, "60s");
  const enabled = async (ls: string) =>
    (await (await call(page, "GET", `/api/v1/launch-settings/${ls}`)).json()).enabled !== false;

  await open(page, `/launch-settings?q=${id}`);
  const bar = page.locator(t("bulk-bar"));
  await expect(bar).toBeHidden();
  // One row, then the whole page (both).
  await page.locator(`${t("list-row")}[data-id="${a}"] ${t("row-select")}`).check();
  await expect(bar.locator(t("bulk-count"))).toHaveAttribute("data-count", "1");
  await page.locator(t("select-page")).check();
  await expect(bar.locator(t("bulk-count"))).toHaveAttribute("data-count", "2");

  // Disable asks with the count; Esc leaves both enabled.
  await bar.locator(t("bulk-disable")).click();
  await expect(bar.locator(t("bulk-ask"))).toContainText("Disable 2 launch settings?");
  await expect(bar.locator(t("bulk-yes"))).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(bar.locator(t("bulk-ask"))).toHaveCount(0);
  expect([await enabled(a), await enabled(b)]).toEqual([true, true]);

  await bar.locator(t("bulk-disable")).click();
  await bar.locator(t("bulk-yes")).click();
  const outcome = bar.locator(t("bulk-outcome"));
  await expect(outcome).toHaveText("Disabled 2 of 2 launch settings.");
  await expect(outcome).toBeFocused();
  for (const ls of [a, b]) {
    const row = page.locator(`${t("list-row")}[data-id="${ls}"]`);
    await expect(row.locator(t("list-badge")).first()).toHaveText("disabled");
    await expect(row.locator(t("row-outcome"))).toContainText("disabled");
  }
  expect([await enabled(a), await enabled(b)]).toEqual([false, false]);
  // The selection went with the action.
  await expect(page.locator(t("select-page"))).not.toBeChecked();

  // Enable both again, then run both now: each row follows its run to its end.
  await page.locator(t("select-page")).check();
  await bar.locator(t("bulk-enable")).click();
  await expect(bar.locator(t("bulk-ask"))).toContainText("Enable 2 launch settings?");
  await bar.locator(t("bulk-yes")).click();
  await expect(outcome).toHaveText("Enabled 2 of 2 launch settings.");
  expect([await enabled(a), await enabled(b)]).toEqual([true, true]);
  await page.locator(t("select-page")).check();
  await bar.locator(t("bulk-run")).click();
  await expect(bar.locator(t("bulk-ask"))).toContainText("Run 2 launch settings now?");
  await bar.locator(t("bulk-yes")).click();
  await expect(outcome).toHaveText("Started runs of 2 of 2 launch settings.");
  const rowA = page.locator(`${t("list-row")}[data-id="${a}"]`);
  const rowB = page.locator(`${t("list-row")}[data-id="${b}"]`);
  await expect(rowA.locator(t("run-outcome"))).toHaveAttribute("data-status", "succeeded", { timeout: 45_000 });
  await expect(rowB.locator(t("run-outcome"))).toHaveAttribute("data-status", "running", { timeout: 45_000 });

  // Interrupt both: the one still running is stopped, the other says it runs nothing.
  await page.locator(t("select-page")).check();
  await bar.locator(t("bulk-interrupt")).click();
  await expect(bar.locator(t("bulk-ask"))).toContainText("Interrupt what 2 launch settings are running?");
  await bar.locator(t("bulk-yes")).click();
  await expect(outcome).toHaveText(
    "Interrupted the runs of 1 of 2 launch settings. The others say why on their rows.",
  );
  await expect(rowB.locator(t("row-outcome"))).toHaveText("interrupted 1 run");
  await expect(rowA.locator(t("row-outcome"))).toContainText("nothing to interrupt");
  await expect(async () => {
    const runs = await (await call(page, "GET", `/api/v1/activations?launch_setting=${b}`)).json();
    expect(runs.items.map((r: { status: string }) => r.status)).toEqual(["interrupted"]);
  }).toPass({ timeout: 30_000 });
});
