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
async function seedRunnable(page: Page, ls: string, group: string) {
  const catalog = await (await call(page, "GET", "/api/v1/catalog")).json();
  if (!catalog.applications.some((a: { id: string }) => a.id === APP)) {
    catalog.pools.push({ id: `${APP}-pool`, title: "The e2e node", hosts: [HOST] });
    catalog.applications.push({ id: APP, title: "E2E demo node", default_pool: `${APP}-pool` });
  }
  if (!catalog.agents.some((a: { application: string; id: string }) => a.application === APP && a.id === "sleep")) {
    catalog.agents.push({
      application: APP, id: "sleep", title: "Sleep", input: "standalone", concurrency: "ANY", overlap: "allow",
      parameters: [{ name: "duration", type: "duration", default: "10s" }],
    });
  }
  catalog.launch_settings.push({ id: ls, application: APP, agent: "sleep", kind: "scheduled", parameters: { duration: "1s" } });
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
