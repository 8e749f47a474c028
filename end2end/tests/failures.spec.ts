import { APIResponse, expect, Page, test } from "@playwright/test";
import { loginAdmin, open, t, uid } from "./catalog-helpers";
import { hydrated, login, VIEWER_PASSWORD } from "./helpers";

// A real demo node (started by scripts/e2e.sh) serves this application on this host; its
// `fail` agent always fails with error type DemoFailure, details "by design".
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

/** A launch setting of the node's `fail` agent (in a group of its own), run once; its activation. */
async function failOnce(page: Page, ls: string, group: string): Promise<string> {
  const catalog = await (await call(page, "GET", "/api/v1/catalog")).json();
  if (!catalog.applications.some((a: { id: string }) => a.id === APP)) {
    catalog.pools.push({ id: `${APP}-pool`, title: "The e2e node", hosts: [HOST] });
    catalog.applications.push({ id: APP, title: "E2E demo node", default_pool: `${APP}-pool` });
  }
  if (!catalog.agents.some((a: { application: string; id: string }) => a.application === APP && a.id === "fail")) {
    catalog.agents.push({
      application: APP, id: "fail", title: "Fail", input: "standalone", concurrency: "ANY", overlap: "allow",
    });
  }
  catalog.launch_settings.push({ id: ls, application: APP, agent: "fail", kind: "scheduled" });
  catalog.schedule_groups.push({ id: group, application: APP, cron: "0 0 1 1 *", time_zone: "UTC", members: [ls] });
  const put = await call(page, "PUT", "/api/v1/catalog", catalog);
  expect(put.status(), await put.text()).toBe(200);
  const run = await call(page, "POST", `/api/v1/launch-settings/${ls}/run`);
  expect(run.status(), await run.text()).toBe(202);
  const activation: string = (await run.json()).activation;
  // The node runs the agent, which fails, and reports the failure and the result.
  await expect(async () => {
    const r = await call(page, "GET", `/api/v1/activations/${activation}`);
    const body = await r.json();
    expect(body.activation?.status).toBe("failed");
    expect(body.failures?.total).toBe(1);
  }).toPass({ timeout: 45_000 });
  return activation;
}

test("a viewer drills from a failing launch setting down to its failure", async ({ page, browser, baseURL }) => {
  // The run on the real node may take a while on a busy machine; the walk itself is quick.
  test.setTimeout(90_000);
  await loginAdmin(page);
  const id = uid("fail");
  const ls = `${APP}.${id}`;
  const activation = await failOnce(page, ls, `${ls}-group`);

  // Viewers may read all of it.
  await page.context().clearCookies();
  await login(page, "viewer", VIEWER_PASSWORD);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);

  // Level 1: launch settings with failures, narrowed to ours by the filter form.
  await open(page, "/failures");
  await page.locator(t("filter-launch-setting")).fill(ls);
  await page.locator(t("filter-apply")).click();
  await expect(page).toHaveURL(new RegExp(`launch_setting=${ls.replace(/\./g, "\\.")}`));
  await hydrated(page);
  const lsRow = page.locator(`${t("launch-setting-row")}[data-id="${ls}"]`);
  await expect(lsRow.locator(t("row-total"))).toHaveText("1");
  await expect(lsRow.locator(`${t("error-type")}[data-error-type="DemoFailure"]`)).toHaveAttribute("data-count", "1");
  // The last error is readable at the first level, and links to its activation's host.
  await expect(lsRow.locator(t("last-error"))).toHaveText("DemoFailure");
  await expect(lsRow.locator(t("last-message"))).toHaveText("the fail agent always fails");
  await expect(lsRow.locator(t("last-error"))).toHaveAttribute("href", new RegExp(`/failures/${ls}/${activation}/${HOST}`));

  // Level 2: its activations.
  await lsRow.locator(t("drill")).click();
  await expect(page).toHaveURL(new RegExp(`/failures/${ls}$`));
  await expect(page.locator(t("level"))).toHaveAttribute("data-level", "activations");
  await expect(page.locator(t("crumb-launch-setting"))).toHaveText(ls);
  const actRow = page.locator(`${t("activation-row")}[data-id="${activation}"]`);
  await expect(actRow.locator(t("row-total"))).toHaveText("1");

  // Level 3: the hosts of the activation, narrowed to the error type (kept in the URL).
  await actRow.locator(t("drill")).click();
  await expect(page.locator(t("level"))).toHaveAttribute("data-level", "hosts");
  await page.locator(`${t("level")} ${t("error-type")}[data-error-type="DemoFailure"]`).click();
  await expect(page).toHaveURL(/error_type=DemoFailure/);
  const hostRow = page.locator(`${t("host-row")}[data-id="${HOST}"]`);
  await expect(hostRow.locator(t("row-total"))).toHaveText("1");

  // Level 4: the failure itself, with its stack behind a disclosure.
  await hostRow.locator(t("drill")).click();
  await expect(page).toHaveURL(new RegExp(`/failures/${ls}/${activation}/${HOST}\\?error_type=DemoFailure`));
  await expect(page.locator(t("level"))).toHaveAttribute("data-level", "failures");
  const failure = page.locator(t("failure"));
  await expect(failure).toHaveCount(1);
  await expect(failure.locator(t("failure-type"))).toHaveText("DemoFailure");
  await expect(failure.locator(t("failure-message"))).toHaveText("the fail agent always fails");
  const details = failure.locator(t("failure-details"));
  await expect(details.locator("pre")).toBeHidden();
  await details.locator("summary").click();
  await expect(details.locator("pre")).toHaveText("by design");

  // The breadcrumbs lead back up with the filter, and the activation's timeline is one click away.
  await page.locator(t("crumb-activation")).click();
  await expect(page).toHaveURL(new RegExp(`/failures/${ls}/${activation}\\?error_type=DemoFailure`));
  await page.locator(t("activation-timeline")).click();
  await expect(page).toHaveURL(new RegExp(`/activations/${activation}$`));
  await expect(page.locator(t("activation-status"))).toHaveText("failed");
  const lane = page.locator(`${t("lane")}[data-host="${HOST}"]`);
  for (const kind of ["dispatched", "accepted", "started", "failed"]) {
    await expect(lane.locator(`${t("event")}[data-kind="${kind}"]`)).toHaveCount(1);
  }
  await expect(lane.locator(t("run-status"))).toHaveText("failed");
  await expect(page.locator(t("failures-total"))).toHaveText("1");

  // The activations list finds it by launch setting and status.
  await open(page, `/activations?launch_setting=${ls}&status=failed`);
  await expect(page.locator(t("activation-row"))).toHaveCount(1);
  await expect(page.locator(`${t("activation-row")}[data-id="${activation}"] ${t("activation-status")}`)).toHaveText("failed");

  // The same walk reads without JavaScript: links, the GET filter form, a native disclosure.
  const context = await browser.newContext({ javaScriptEnabled: false, baseURL });
  const plain = await context.newPage();
  await plain.goto("/login");
  await plain.locator(t("login-name")).fill("viewer");
  await plain.locator(t("login-password")).fill(VIEWER_PASSWORD);
  await plain.locator(t("login-submit")).click();
  await plain.waitForURL((u) => !u.pathname.startsWith("/ui/"));
  await plain.goto("/failures");
  await plain.locator(t("filter-launch-setting")).fill(ls);
  await plain.locator(t("filter-error-type")).fill("DemoFailure");
  await plain.locator(t("filter-apply")).click();
  await plain.locator(`${t("launch-setting-row")}[data-id="${ls}"] ${t("drill")}`).click();
  await plain.locator(`${t("activation-row")}[data-id="${activation}"] ${t("drill")}`).click();
  await plain.locator(`${t("host-row")}[data-id="${HOST}"] ${t("drill")}`).click();
  await expect(plain).toHaveURL(new RegExp(`/failures/${ls}/${activation}/${HOST}\\?error_type=DemoFailure`));
  await plain.locator(`${t("failure-details")} summary`).click();
  await expect(plain.locator(`${t("failure-details")} pre`)).toHaveText("by design");
  await context.close();
});

test("the global search finds an error type and leads to its failures", async ({ page }) => {
  test.setTimeout(90_000);
  await loginAdmin(page);
  const ls = `${APP}.${uid("errtype")}`;
  await failOnce(page, ls, `${ls}-group`);

  // Part of it, any case, lists it with how many launch settings reported it.
  await open(page, "/search?q=demofail");
  const hit = page.locator(`${t("hit")}[data-kind="error type"][data-id="DemoFailure"]`);
  await expect(hit).toContainText(/error type of \d+ launch settings?/);
  await hit.locator(t("hit-link")).click();
  await expect(page).toHaveURL(/\/failures\?error_type=DemoFailure$/);

  // Its whole name goes straight to its failures.
  await open(page, "/");
  const box = page.locator(t("global-search"));
  await box.fill("DemoFailure");
  await box.press("Enter");
  await expect(page).toHaveURL(/\/failures\?error_type=DemoFailure$/);
});
