import { APIResponse, expect, Page, test } from "@playwright/test";
import { loginAdmin, open, t, uid } from "./catalog-helpers";
import { startProducer, stopProducer } from "./producer";

// A real demo node (started by scripts/e2e.sh) serves this application on this host; its
// `flaky` agent fails for good at the rate its `failure_rate` parameter gives.
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

async function json(page: Page, path: string): Promise<any> {
  const r = await call(page, "GET", path);
  expect(r.status(), await r.text()).toBe(200);
  return r.json();
}

/** How many dead letters of `ls` wait (status dead). */
async function deadCount(page: Page, ls: string): Promise<number> {
  return (await json(page, `/api/v1/dead-letters?launch_setting=${ls}&status=dead`)).total;
}

/** The running stream activation of `ls` other than `not`. */
async function running(page: Page, ls: string, not?: string): Promise<string> {
  let id = "";
  await expect(async () => {
    const list = await json(page, `/api/v1/activations?launch_setting=${ls}&status=running`);
    const found = list.items.find((a: { id: string }) => a.id !== not);
    expect(found, `a running activation of ${ls}`).toBeTruthy();
    id = found.id;
  }).toPass({ timeout: 45_000 });
  return id;
}

test("replay dead letters, watch the progress bar finish and the node process them", async ({ page }) => {
  // Real messages through the real node and broker, twice; generous on a busy machine.
  test.setTimeout(240_000);
  await loginAdmin(page);
  const id = uid("dlq");
  const ls = `${APP}.${id}`;
  // The data queue's address is its id: an exchange of this test alone.
  const queue = `${APP}.${id}.in`;
  const catalog = await json(page, "/api/v1/catalog");
  if (!catalog.applications.some((a: { id: string }) => a.id === APP)) {
    catalog.pools.push({ id: `${APP}-pool`, title: "The e2e node", hosts: [HOST] });
    catalog.applications.push({ id: APP, title: "E2E demo node", default_pool: `${APP}-pool` });
  }
  catalog.data_queues.push({ id: queue, title: "Events of the dead-letter test", kind: "queue" });
  const flaky = catalog.agents.find((a: { application: string; id: string }) => a.application === APP && a.id === "flaky");
  const rates = [
    { name: "temporary_rate", type: "decimal", default: 0, min: 0, max: 1 },
    { name: "failure_rate", type: "decimal", default: 0, min: 0, max: 1 },
  ];
  if (flaky) {
    flaky.data_queue = queue;
  } else {
    catalog.agents.push({
      application: APP, id: "flaky", title: "Flaky", input: "messages", data_queue: queue,
      concurrency: "ANY", overlap: "allow", parameters: rates,
    });
  }
  // Every message fails, twice (200 ms apart), then is dead-lettered; the breaker stays out of
  // it (a threshold far above what this test sends).
  catalog.launch_settings.push({
    id: ls, application: APP, agent: "flaky", kind: "stream", stream_mode: "asap",
    parameters: { failure_rate: "1", temporary_rate: "0" }, failure_threshold: 1000,
    retry: { initial_delay: "200ms", multiplier: 1.0, max_delay: "200ms", max_deliveries: 2 },
  });
  const put = await call(page, "PUT", "/api/v1/catalog", catalog);
  expect(put.status(), await put.text()).toBe(200);
  const failing = await running(page, ls);

  // Events flow in until a few have died; then the producer stops and the last ones die too.
  const producer = startProducer(queue, id, 300);
  try {
    await expect.poll(() => deadCount(page, ls), { timeout: 60_000 }).toBeGreaterThanOrEqual(3);
  } finally {
    await stopProducer(producer);
  }
  let total = 0;
  await expect(async () => {
    const before = await deadCount(page, ls);
    await new Promise((r) => setTimeout(r, 2_000));
    total = await deadCount(page, ls);
    expect(total).toBe(before);
  }).toPass({ timeout: 30_000 });

  // They show in the list, with where they came from and why.
  await open(page, `/dead-letters?launch_setting=${ls}`);
  const rows = page.locator(t("dead-letter-row"));
  await expect(page.locator(t("dl-total"))).toHaveText(String(total));
  await expect(rows).toHaveCount(total);
  await expect(rows.first()).toHaveAttribute("data-status", "dead");
  await expect(rows.first()).toHaveAttribute("data-launch-setting", ls);
  await expect(rows.first().locator(t("dl-error-type"))).toHaveText("FlakyFailure");

  // Delete asks first, with the count it would remove; with no filter, a second time. Cancelled
  // both times: nothing goes.
  await page.locator(t("dl-delete-matching")).click();
  await expect(page.locator(t("dl-delete-count"))).toHaveAttribute("data-total", String(total));
  await page.locator(t("dl-cancel-delete")).click();
  await expect(page.locator(t("dl-confirm"))).toHaveCount(0);
  await open(page, "/dead-letters");
  await page.locator(t("dl-delete-matching")).click();
  // Every dead letter of every test so far: at least this test's.
  await expect(page.locator(t("dl-delete-count"))).toBeVisible();
  const everyDead = Number(await page.locator(t("dl-delete-count")).getAttribute("data-total"));
  expect(everyDead).toBeGreaterThanOrEqual(total);
  await page.locator(t("dl-confirm-delete")).click();
  await expect(page.locator(t("dl-delete-everything"))).toContainText(`${everyDead} in all`);
  await page.locator(t("dl-cancel-delete")).click();
  expect(await deadCount(page, ls)).toBe(total);
  await open(page, `/dead-letters?launch_setting=${ls}`);

  // One of them, opened: the body as JSON, the node's headers, its failure history.
  await rows.first().locator(t("dl-open")).click();
  await expect(page).toHaveURL(/\/dead-letters\/\d+$/);
  await expect(page.locator(t("dl-body-encoding"))).toHaveAttribute("data-encoding", "json");
  await expect(page.locator(t("dl-body"))).toContainText('"text": ');
  await expect(page.locator(`${t("dl-header")}[data-name="x-am-launch-setting"]`)).toContainText(ls);
  await expect(page.locator(t("dl-attempts"))).toHaveText("2");
  await expect(page.locator(`${t("failure")} ${t("failure-type")}`).first()).toHaveText("FlakyFailure");

  // The operator fixes the launch setting: disabled, its stream stops; no more failures; enabled
  // again, the stream restarts with the new parameters.
  expect((await call(page, "POST", `/api/v1/launch-settings/${ls}/disable`)).status()).toBe(204);
  await expect(async () => {
    const a = await json(page, `/api/v1/activations/${failing}`);
    expect(["running", "dispatched", "waiting"]).not.toContain(a.activation.status);
  }).toPass({ timeout: 45_000 });
  // Replayed while the launch setting is disabled, the canary would wait in the broker: the
  // confirmation warns, and the operation says so and stops by itself after the canary.
  await open(page, `/dead-letters?launch_setting=${ls}`);
  await page.locator(t("dl-replay-matching")).click();
  const confirm = page.locator(t("dl-replay-confirm"));
  await expect(confirm.locator(t("dl-replay-count"))).toHaveAttribute("data-total", String(total));
  await expect(confirm.locator(t("dl-replay-disabled"))).toContainText(ls);
  await expect(confirm.locator(t("dl-replay-canary"))).toBeChecked();
  await confirm.locator(t("dl-confirm-replay")).click();
  const stopped = page.locator(`${t("dl-operation")} ${t("operation-progress")}`);
  await expect(stopped).toHaveAttribute("data-status", "failed", { timeout: 30_000 });
  await expect(stopped).toHaveAttribute("data-done", "1");
  const stoppedOutcome = page.locator(`${t("dl-operation")} ${t("replay-outcomes")}`);
  await expect(stoppedOutcome).toHaveAttribute("data-waiting", "1");
  await expect(stoppedOutcome).toHaveAttribute("data-processed", "0");
  await expect(page.locator(`${t("dl-replay-result")}[data-result="waiting"]`)).toHaveCount(1);
  expect(await deadCount(page, ls)).toBe(total - 1);

  const saved = await json(page, `/api/v1/launch-settings/${ls}`);
  const fixed = await call(page, "PUT", `/api/v1/launch-settings/${ls}`, {
    ...saved, parameters: { ...saved.parameters, failure_rate: "0" },
  });
  expect(fixed.status(), await fixed.text()).toBe(200);
  expect((await call(page, "POST", `/api/v1/launch-settings/${ls}/enable`)).status()).toBe(204);
  const healthy = await running(page, ls, failing);

  // The canary that waited is processed once the launch setting runs again.
  await expect(async () => {
    const page1 = await json(page, `/api/v1/dead-letters?launch_setting=${ls}&status=replayed`);
    expect(page1.items.map((d: { replay: { result: string } }) => d.replay.result)).toEqual(["processed"]);
  }).toPass({ timeout: 60_000 });

  // Select the rest and replay, a canary first; the progress bar fills up, and the outcome says
  // what the node made of them: every one processed.
  await open(page, `/dead-letters?launch_setting=${ls}`);
  await page.locator(t("dl-select-all")).check();
  await expect(page.locator(t("dl-replay-selected"))).toHaveText(`Replay selected (${total - 1})`);
  await page.locator(t("dl-replay-selected")).click();
  await expect(page.locator(`${t("dl-replay-confirm")} ${t("dl-replay-count")}`)).toHaveAttribute("data-total", String(total - 1));
  await expect(page.locator(t("dl-replay-disabled"))).toHaveCount(0);
  await page.locator(t("dl-confirm-replay")).click();
  const progress = page.locator(`${t("dl-operation")} ${t("operation-progress")}`);
  await expect(progress).toHaveAttribute("data-total", String(total - 1));
  // Within seconds; a runner that died mid-way is taken over after a minute, so allow that too.
  await expect(progress).toHaveAttribute("data-status", "succeeded", { timeout: 100_000 });
  await expect(progress).toHaveAttribute("data-done", String(total - 1));
  await expect(progress).toHaveAttribute("data-failed", "0");
  await expect(progress.locator("progress")).toHaveAttribute("value", String(total - 1));
  await expect(page.locator(`${t("dl-operation")} ${t("operation-link")}`)).toHaveAttribute("href", /^\/operations\//);
  const outcome = page.locator(`${t("dl-operation")} ${t("replay-outcomes")}`);
  await expect(outcome).toHaveAttribute("data-processed", String(total - 1), { timeout: 60_000 });
  await expect(outcome).toHaveAttribute("data-failed-again", "0");

  // The list reloads by itself: every one replayed, by whom, and processed.
  await expect(page.locator(`${t("dl-replay-result")}[data-result="processed"]`)).toHaveCount(total, { timeout: 30_000 });
  for (const row of await rows.all()) {
    await expect(row).toHaveAttribute("data-status", "replayed");
    await expect(row.locator(t("dl-replayed-by"))).toContainText("replayed by admin");
  }

  // The node processes them (its heartbeat counters say so) and none comes back.
  await expect(async () => {
    const detail = await json(page, `/api/v1/activations/${healthy}`);
    const processed = detail.timeline
      .flatMap((lane: { runs: { processed: number }[] }) => lane.runs)
      .reduce((n: number, run: { processed: number }) => n + run.processed, 0);
    expect(processed).toBeGreaterThanOrEqual(total);
  }).toPass({ timeout: 60_000 });
  expect(await deadCount(page, ls)).toBe(0);
  const all = await json(page, `/api/v1/dead-letters?launch_setting=${ls}`);
  expect(all.total).toBe(total);

  // Leave nothing running.
  expect((await call(page, "POST", `/api/v1/launch-settings/${ls}/disable`)).status()).toBe(204);
});
