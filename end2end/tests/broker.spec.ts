import { expect, test } from "@playwright/test";
import { loginAdmin, open, seed, t, uid } from "./catalog-helpers";
import { VIEWER_PASSWORD, hydrated, login } from "./helpers";

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
  const before = await page.locator(t("broker-reconciled-at")).textContent();

  await page.locator(t("reconcile-now")).click();
  await expect(page.locator(t("reconcile-requested"))).toBeVisible();
  // A full pass runs after the request: the time of the last pass moves on.
  await expect(async () => {
    await expect(page.locator(t("broker-reconciled-at"))).not.toHaveText(before ?? "", { timeout: 1000 });
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
