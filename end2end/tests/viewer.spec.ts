import { expect, test } from "@playwright/test";
import { VIEWER_PASSWORD, hydrated, login } from "./helpers";
import { appWithPool, loginAdmin, open, seed, t, uid } from "./catalog-helpers";

test("a viewer reads the catalog but cannot edit it", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("view");
  await seed(page, {
    ...appWithPool(app),
    agents: [{ application: app, id: "job", input: "standalone", concurrency: "ANY", overlap: "skip" }],
    launch_settings: [{ id: `${app}.job`, application: app, agent: "job", kind: "scheduled" }],
    schedule_groups: [{ id: `${app}.g`, application: app, cron: "0 2 * * *", time_zone: "UTC", members: [`${app}.job`] }],
  });
  await page.locator(t("logout")).click();
  await expect(page).toHaveURL(/\/login$/);
  await login(page, "viewer", VIEWER_PASSWORD);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);

  await open(page, `/pools?q=${app}`);
  await expect(page.locator(`${t("list-row")}[data-id="${app}-pool"]`)).toBeVisible();
  await expect(page.locator(t("new"))).toHaveCount(0);
  await open(page, `/pools/${app}-pool`);
  await expect(page.locator(t("field-hosts"))).toHaveValue("host-a\nhost-b");
  await expect(page.locator(t("field-title"))).toHaveAttribute("readonly", "");
  await expect(page.locator(t("save"))).toHaveCount(0);
  await expect(page.locator(t("delete"))).toHaveCount(0);
  // Lists offer no row actions, and the launch setting's summary reads the same for viewers.
  await open(page, `/launch-settings?q=${app}`);
  await expect(page.locator(`${t("list-row")}[data-id="${app}.job"]`)).toBeVisible();
  await expect(page.locator(t("row-switch"))).toHaveCount(0);
  await expect(page.locator(t("row-select"))).toHaveCount(0);
  await expect(page.locator(t("bulk-bar"))).toHaveCount(0);
  await open(page, `/launch-settings/${app}.job`);
  await expect(page.locator(t("current-status"))).toHaveText("waiting");
  await expect(page.locator(t("toggle-enabled"))).toHaveCount(0);
  await expect(page.locator(`${t("ls-overview")} ${t("throughput-chart")}`)).toHaveAttribute("data-processed", "0");
  await expect(page.locator(`${t("ls-overview")} ${t("ls-no-runs")}`)).toBeVisible();
  await expect(page.locator(t("save"))).toHaveCount(0);
  await open(page, `/schedule-groups/${app}.g`);
  await expect(page.locator(t("member"))).toHaveCount(1);
  await expect(page.locator(t("member-up"))).toHaveCount(0);
  await expect(page.locator(t("member"))).toHaveAttribute("draggable", "false");

  // The server refuses anyway.
  const origin = new URL(page.url()).origin;
  const resp = await page.request.post(`${origin}/ui/save_entity`, {
    headers: { Origin: origin, "Content-Type": "application/json" },
    data: JSON.stringify({ entity: { kind: "pool", entity: { id: `${app}-pool`, title: "hacked", hosts: [] } }, create: false }),
  });
  expect(resp.status()).toBe(403);
  expect(await resp.text()).toContain("viewer");
  const toggle = await page.request.post(`${origin}/ui/set_enabled`, {
    headers: { Origin: origin, "Content-Type": "application/json" },
    data: JSON.stringify({ key: { LaunchSetting: `${app}.job` }, enabled: false }),
  });
  expect(toggle.status()).toBe(403);
});

test("list pages read without JavaScript", async ({ browser, baseURL }) => {
  const context = await browser.newContext({ javaScriptEnabled: false, baseURL });
  const page = await context.newPage();
  await page.goto("/login");
  await page.locator(t("login-name")).fill("viewer");
  await page.locator(t("login-password")).fill(VIEWER_PASSWORD);
  await page.locator(t("login-submit")).click();
  await page.waitForURL((u) => !u.pathname.startsWith("/ui/"));
  await page.goto("/pools?q=zzz-nothing");
  await expect(page.locator(t("list-summary"))).toHaveText("Nothing matches.");
  await expect(page.locator(t("filter-q"))).toHaveValue("zzz-nothing");
  await context.close();
});
