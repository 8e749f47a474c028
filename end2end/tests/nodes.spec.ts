import { expect, test } from "@playwright/test";
import { appWithPool, loginAdmin, open, seed, t, uid } from "./catalog-helpers";
import { startNode, stopProducer } from "./producer";

// Nodes appear when an application instance publishes itself over the broker. scripts/e2e.sh
// starts one real demo node; the other applications seeded here have none.
const NODE_APP = process.env.E2E_NODE_APP ?? "e2e-demo";
const NODE_HOST = process.env.E2E_NODE_HOST ?? "e2e-node-a";

test("the real node shows live with the agents it offers, and offers them on its application's page", async ({ page }) => {
  await loginAdmin(page);
  const row = page.locator(`${t("node-row")}[data-host="${NODE_HOST}"][data-application="${NODE_APP}"]`);
  await expect(async () => {
    await open(page, `/nodes?application=${NODE_APP}`);
    await expect(row).toHaveCount(1, { timeout: 1000 });
  }).toPass({ timeout: 30_000 });
  await expect(row).toHaveAttribute("data-status", "live");
  await expect(row.locator(t("node-status"))).toHaveText("live");
  await expect(row.locator(t("node-running"))).toHaveText(/^\d+ \/ \d+$/);
  await expect(row.locator(`${t("node-agent")}`, { hasText: "sleep" })).toBeVisible();

  // Its application in the catalog (as the run-now tests declare it): the agent an operator
  // declared is offered by the node; those the node offers beyond the catalog say so.
  const catalog = await (await page.request.get("/api/v1/catalog")).json();
  if (!catalog.applications.some((a: { id: string }) => a.id === NODE_APP)) {
    await seed(page, {
      pools: [{ id: `${NODE_APP}-pool`, title: "The e2e node", hosts: [NODE_HOST] }],
      applications: [{ id: NODE_APP, title: "E2E demo node", default_pool: `${NODE_APP}-pool` }],
    });
  }
  if (!catalog.agents.some((a: { application: string; id: string }) => a.application === NODE_APP && a.id === "sleep")) {
    await seed(page, {
      agents: [{
        application: NODE_APP, id: "sleep", title: "Sleep", input: "standalone", concurrency: "ANY", overlap: "allow",
        parameters: [{ name: "duration", type: "duration", default: "10s" }],
      }],
    });
  }
  await open(page, `/applications/${NODE_APP}`);
  await expect(page.locator(t("live-nodes"))).toContainText(NODE_HOST);
  const sleep = page.locator(`${t("application-agent")}[data-id="sleep"]`);
  await expect(sleep).toHaveAttribute("data-offered", "true");
  await expect(sleep.locator(t("agent-offered-by"))).toHaveText(NODE_HOST);
});

test("agents that no live node offers are flagged on their application's page", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("offer");
  await seed(page, {
    ...appWithPool(app),
    agents: [
      { application: app, id: "export", title: "Export", input: "standalone", concurrency: "ANY", overlap: "skip" },
      { application: app, id: "purge", title: "Purge", input: "standalone", concurrency: "MANY", overlap: "allow" },
    ],
  });

  await open(page, `/applications/${app}`);
  await expect(page.locator(t("no-live-node"))).toBeVisible();
  const rows = page.locator(t("application-agent"));
  await expect(rows).toHaveCount(2);
  for (const id of ["export", "purge"]) {
    const row = page.locator(`${t("application-agent")}[data-id="${id}"]`);
    await expect(row.locator(t("agent-not-offered"))).toHaveText("offered by no live node");
    await expect(row).toHaveAttribute("data-offered", "false");
  }
  await expect(page.locator(t("not-offered-summary"))).toHaveText("2 of 2 agents are offered by no live node.");

  // The nodes page, filtered by the application in the URL, says there is none.
  await page.locator(t("nav-nodes")).click();
  await expect(page).toHaveURL(/\/nodes$/);
  await page.locator(t("filter-application")).selectOption(app);
  await page.locator(t("filter-apply")).click();
  await expect(page).toHaveURL(new RegExp(`/nodes\\?application=${app}$`));
  await expect(page.locator(t("no-nodes"))).toBeVisible();
  await expect(page.locator(t("filter-application"))).toHaveValue(app);
});

test("the schema drift overview lists nothing while saved parameters fit", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("drift");
  await seed(page, {
    ...appWithPool(app),
    agents: [
      {
        application: app, id: "sleep", input: "standalone", concurrency: "ANY", overlap: "skip",
        parameters: [{ name: "duration", type: "duration", required: true }],
      },
    ],
    launch_settings: [
      { id: `${app}.sleep.1`, application: app, agent: "sleep", kind: "scheduled", parameters: { duration: "5s" } },
    ],
    schedule_groups: [{ id: `${app}.nightly`, application: app, cron: "0 2 * * *", members: [`${app}.sleep.1`] }],
  });
  await open(page, "/");
  await page.locator(t("nav-schema-drift")).click();
  await expect(page.locator(t("schema-drift-page"))).toBeVisible();
  await page.locator(t("filter-application")).selectOption(app);
  await page.locator(t("filter-apply")).click();
  await expect(page).toHaveURL(new RegExp(`/schema-drift\\?application=${app}$`));
  await expect(page.locator(t("no-drift"))).toBeVisible();
  await expect(page.locator(t("drift-row"))).toHaveCount(0);
});

test("a schedule group's continue-on-failure setting is saved and read back", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("cof");
  const group = `${app}.nightly`;
  await seed(page, {
    ...appWithPool(app),
    agents: [{ application: app, id: "step", input: "standalone", concurrency: "ANY", overlap: "skip" }],
    launch_settings: [{ id: `${app}.a`, application: app, agent: "step", kind: "scheduled" }],
    schedule_groups: [{ id: group, application: app, cron: "0 2 * * *", members: [`${app}.a`] }],
  });
  const saved = async () => {
    const r = await page.request.get(`/api/v1/schedule-groups/${group}`);
    expect(r.status()).toBe(200);
    return (await r.json()).continue_on_failure ?? false;
  };

  await open(page, `/schedule-groups/${group}`);
  const box = page.locator(t("field-continue-on-failure"));
  await expect(box).not.toBeChecked();
  await box.check();
  await page.locator(t("save")).click();
  await expect(page.locator(t("form-saved"))).toBeVisible();
  expect(await saved()).toBe(true);
  await page.reload();
  await expect(page.locator(t("field-continue-on-failure"))).toBeChecked();

  await open(page, `/schedule-groups/${group}`);
  await page.locator(t("field-continue-on-failure")).uncheck();
  await page.locator(t("save")).click();
  await expect(page.locator(t("form-saved"))).toBeVisible();
  expect(await saved()).toBe(false);
});

test("a node whose application is not in the catalog waits, and its agents appear once the application is created", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("e2e-late");
  const host = `${app}-host`;
  const node = startNode(app, host);
  try {
    const row = page.locator(`${t("node-row")}[data-host="${host}"][data-application="${app}"]`);
    await expect(async () => {
      await open(page, `/nodes?application=${app}`);
      await expect(row.locator(t("node-waiting")), "").toBeVisible({ timeout: 1000 });
    }).toPass({ timeout: 30_000 });
    await expect(row.locator(t("node-waiting"))).toHaveText("not in the catalog");
    await expect(row.locator(t("node-create-application"))).toHaveAttribute("href", "/applications/new");

    // The application is created (as the shortcut's form would): no node restart needed.
    await seed(page, {
      pools: [{ id: `${app}-pool`, title: "Late pool", hosts: [host] }],
      applications: [{ id: app, title: "Late application", default_pool: `${app}-pool` }],
    });
    await expect(async () => {
      await open(page, `/nodes?application=${app}`);
      await expect(row.locator(t("node-waiting"))).toHaveCount(0, { timeout: 1000 });
      await expect(row.locator(t("node-agent"), { hasText: "sleep" })).toBeVisible({ timeout: 1000 });
    }).toPass({ timeout: 30_000 });
    const agents = await (await page.request.get("/api/v1/agents")).json();
    expect(agents.some((a: { application: string; id: string }) => a.application === app && a.id === "sleep")).toBe(true);
  } finally {
    await stopProducer(node);
  }
});
