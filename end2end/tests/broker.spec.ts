import { expect, test } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { loginAdmin, open, seed, t, uid } from "./catalog-helpers";
import { VIEWER_PASSWORD, hydrated, login } from "./helpers";
import { startNode, startProducer, stopProducer } from "./producer";

// The manager declares the broker's data topology from the catalog: a new data queue reaches
// the broker within seconds, and an operator can have everything declared again.
test("a catalog change reaches the broker and Reconcile now runs a full pass", async ({ page }) => {
  await loginAdmin(page);
  const dq = uid("broker-dq");
  await seed(page, { data_queues: [{ id: dq, kind: "topic" }] });
  const catalog = await (await page.request.get("/api/v1/broker")).json();

  await open(page, "/broker");
  // The page refreshes itself: the new revision is applied without a reload.
  await expect(page.locator(t("broker-state"))).toHaveText("in sync", { timeout: 15_000 });
  await expect(page.locator(t("broker-applied-revision"))).not.toHaveText(
    String(catalog.catalog_revision - 1),
  );
  // The whole time of the last pass: the pass of the catalog change and the requested one may
  // fall within one second, which the shown time does not tell apart.
  const lastPass = page.locator(t("broker-reconciled-at")).locator("time");
  const before = await lastPass.getAttribute("datetime");

  await page.locator(t("reconcile-now")).click();
  await expect(page.locator(t("reconcile-requested"))).toBeVisible();
  // A full pass runs after the request: the time of the last pass moves on.
  await expect(async () => {
    await expect(lastPass).not.toHaveAttribute("datetime", before ?? "", { timeout: 1000 });
  }).toPass({ timeout: 15_000 });
  await expect(page.locator(t("broker-state"))).toHaveText("in sync");
  await expect(page.locator(t("broker-objects"))).toContainText("exchanges");
});

test("viewers see the broker but cannot ask for a pass", async ({ page }) => {
  await login(page, "viewer", VIEWER_PASSWORD);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  await open(page, "/broker");
  await expect(page.locator(t("broker-state"))).toBeVisible();
  await expect(page.locator(t("reconcile-now"))).toHaveCount(0);
  const origin = new URL(page.url()).origin;
  const resp = await page.request.post(`${origin}/ui/reconcile_now`, {
    headers: { Origin: origin, "Content-Type": "application/x-www-form-urlencoded" },
    data: "",
  });
  expect(resp.status()).toBe(403);
});

// Someone removes a queue by hand: the Broker page says it is missing, and Reconcile now
// declares it again.
test("the Broker page shows a queue removed by hand and Reconcile now brings it back", async ({ page }) => {
  await loginAdmin(page);
  const dq = uid("broker-gone");
  await seed(page, { data_queues: [{ id: dq, kind: "topic" }] });
  await open(page, "/broker");
  const row = page.locator(`${t("queue-row")}[data-role="unrouted"]`).filter({ hasText: dq });
  await expect(row).toHaveCount(1, { timeout: 20_000 });
  const queue = await row.getAttribute("data-queue");
  expect(queue).toBeTruthy();
  // The data queue's own page says what its unrouted queue keeps.
  await open(page, `/data-queues/${dq}`);
  await expect(page.locator(t("dq-unrouted"))).toHaveAttribute("data-count", "0");
  await open(page, "/broker");
  await expect(page.locator(`${t("drift-row")}[data-name="${queue}"]`)).toHaveCount(0);

  execFileSync("rabbitmqctl", ["delete_queue", queue!], { stdio: "ignore" });
  const missing = page.locator(`${t("drift-row")}[data-name="${queue}"]`);
  await expect(missing).toBeVisible({ timeout: 20_000 });
  await expect(missing.locator(t("drift-state"))).toHaveText(/missing/);
  // In step with the catalog, but not with the broker: the state says so, and the dashboard
  // raises it above everything else, linking to this page.
  await expect(page.locator(t("broker-state"))).toHaveText("drift");
  await open(page, "/");
  const alarm = page.locator(`${t("alarm")}[data-kind="broker_drift"]`);
  await expect(alarm).toBeVisible({ timeout: 20_000 });
  await expect(alarm.locator("a")).toHaveAttribute("href", "/broker");
  await alarm.locator("a").click();
  await expect(page).toHaveURL(/\/broker$/);
  await open(page, "/broker");
  await expect(missing).toBeVisible();

  await page.locator(t("reconcile-now")).click();
  await expect(missing).toHaveCount(0, { timeout: 30_000 });
  await expect(page.locator(t("broker-state"))).toHaveText("in sync");
  await open(page, "/");
  await expect(page.locator(`${t("alarm")}[data-kind="broker_drift"]`)).toHaveCount(0, { timeout: 20_000 });
});

// Messages published before any node runs wait in the launch setting's queue, shown as its
// backlog on the list; when a node of the application starts, the backlog drains.
test("the launch settings list shows a backlog that drains when a node starts", async ({ page }) => {
  test.setTimeout(120_000);
  await loginAdmin(page);
  const app = uid("bk");
  const host = `${app}-host`;
  const address = `${app}.in`;
  const ls = `${app}.echo`;
  await seed(page, {
    pools: [{ id: `${app}-pool`, title: "Backlog test", hosts: [host] }],
    applications: [{ id: app, title: "Backlog test", default_pool: `${app}-pool` }],
    data_queues: [{ id: `${app}-dq`, kind: "topic", address }],
    agents: [{
      application: app, id: "echo", title: "Echo", input: "messages", data_queue: `${app}-dq`,
      concurrency: "ANY", overlap: "allow",
    }],
    launch_settings: [{ id: ls, application: app, agent: "echo", kind: "stream", stream_mode: "asap" }],
  });
  // The subscription exists before any node: wait until the reconciler declared it.
  await open(page, "/broker");
  await expect(page.locator(`${t("queue-row")}[data-role="subscription"]`).filter({ hasText: ls })).toHaveCount(1, {
    timeout: 20_000,
  });

  const producer = startProducer(address, app, 100);
  try {
    await page.waitForTimeout(3_000);
  } finally {
    await stopProducer(producer);
  }
  const backlog = async () => {
    await open(page, `/launch-settings?q=${app}`);
    const cell = page.locator(`${t("list-row")}[data-id="${ls}"] td[data-label="Backlog"]`);
    return (await cell.textContent()) ?? "";
  };
  const waitingIn = (text: string) => Number(/^(\d+) waiting/.exec(text)?.[1] ?? "0");
  let waiting = 0;
  await expect(async () => {
    const text = await backlog();
    waiting = waitingIn(text);
    expect(text).toContain("0 consumers");
    expect(waiting).toBeGreaterThan(0);
  }).toPass({ timeout: 30_000 });
  // Every message sent: the same count across two broker samples (one every 5 s).
  await expect(async () => {
    const before = waitingIn(await backlog());
    await page.waitForTimeout(6_000);
    waiting = waitingIn(await backlog());
    expect(waiting).toBe(before);
  }).toPass({ timeout: 40_000 });

  const node = startNode(app, host);
  try {
    await expect(async () => {
      const text = await backlog();
      expect(text).toMatch(/^0 waiting\s*1 consumer\b/);
    }).toPass({ timeout: 60_000 });
    // The launch setting's chart of the last hour counts each message the node processed once,
    // and the backlog it had; the dashboard's chart counts them among everyone's.
    await open(page, `/launch-settings/${ls}`);
    const chart = page.locator(`${t("ls-overview")} ${t("throughput-chart")}`);
    await expect(async () => {
      await page.reload();
      await expect(chart).toHaveAttribute("data-processed", String(waiting), { timeout: 1_000 });
    }).toPass({ timeout: 30_000 });
    const sampled = chart.locator(`${t("chart-minute")}[data-backlog]:not([data-backlog=""])`);
    const backlogs = await sampled.evaluateAll((gs) => gs.map((g) => Number(g.getAttribute("data-backlog"))));
    expect(Math.max(...backlogs)).toBe(waiting);
    await expect(page.locator(`${t("ls-overview")} ${t("ls-runs-total")}`)).toHaveAttribute("data-count", "1");
    await open(page, "/");
    const all = Number(
      await page.locator(`${t("dashboard-throughput")} ${t("throughput-chart")}`).getAttribute("data-processed"),
    );
    expect(all).toBeGreaterThanOrEqual(waiting);
  } finally {
    await stopProducer(node);
  }
});
