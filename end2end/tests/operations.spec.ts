import { APIResponse, expect, Page, test } from "@playwright/test";
import { appWithPool, loginAdmin, open, seed, t, uid } from "./catalog-helpers";

async function call(page: Page, method: string, path: string, body?: unknown): Promise<APIResponse> {
  const origin = new URL(page.url()).origin;
  return page.request.fetch(`${origin}${path}`, {
    method,
    headers: { Origin: origin, "Content-Type": "application/json" },
    data: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** An application with two standalone launch settings in a group that never fires. */
async function seedTwo(page: Page, app: string): Promise<[string, string]> {
  const ls: [string, string] = [`${app}.one`, `${app}.two`];
  await seed(page, {
    ...appWithPool(app),
    agents: [{
      application: app, id: "sleep", title: "Sleep", input: "standalone", concurrency: "ANY", overlap: "allow",
      parameters: [{ name: "duration", type: "duration", default: "1s" }],
    }],
    launch_settings: ls.map((id) => ({ id, application: app, agent: "sleep", kind: "scheduled", parameters: {} })),
    schedule_groups: [{ id: `${app}.group`, application: app, cron: "0 0 1 1 *", time_zone: "UTC", members: ls, enabled: false }],
  });
  return ls;
}

test("an operator re-enables disabled launch settings in bulk and watches the operation finish", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("ops");
  const [one, two] = await seedTwo(page, app);
  for (const id of [one, two]) {
    const r = await call(page, "POST", `/api/v1/launch-settings/${id}/disable`);
    expect(r.status(), await r.text()).toBe(204);
  }

  await open(page, "/operations");
  const form = page.locator(t("reenable"));
  for (const id of [one, two]) {
    const box = form.locator(`input[value="${id}"]`);
    await expect(box).toBeVisible();
    await expect(box.locator("xpath=ancestor::li")).toContainText("disabled by admin");
    await box.check();
  }
  await page.locator(t("reenable-selected")).click();

  await expect(page).toHaveURL(/\/operations\/[0-9a-f-]{36}$/);
  const progress = page.locator(t("operation-progress"));
  await expect(progress).toHaveAttribute("data-status", "succeeded", { timeout: 30_000 });
  await expect(progress).toHaveAttribute("data-done", "2");
  await expect(progress).toHaveAttribute("data-total", "2");
  await expect(page.locator(t("operation-selection"))).toContainText(one);
  for (const id of [one, two]) {
    const resp = await call(page, "GET", `/api/v1/launch-settings/${id}`);
    expect(resp.status()).toBe(200);
    // The catalog document leaves `enabled` out when it is true (its default).
    expect((await resp.json()).enabled ?? true, id).toBe(true);
  }

  // The list shows it too, finished.
  await open(page, "/operations");
  const row = page.locator(`${t("operation-row")}`).filter({ hasText: one }).first();
  await expect(row.locator(t("operation-progress"))).toHaveAttribute("data-status", "succeeded");
});

test("re-run all matching starts each launch setting of an activation search once", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("rerun");
  const [one] = await seedTwo(page, app);
  for (let i = 0; i < 2; i++) {
    const r = await call(page, "POST", `/api/v1/launch-settings/${one}/run`);
    expect(r.status(), await r.text()).toBe(202);
  }
  await open(page, `/activations?launch_setting=${encodeURIComponent(one)}`);
  await expect(page.locator(t("activation-row"))).toHaveCount(2);
  // It asks first, with the count it will start: one launch setting, once.
  await page.locator(t("rerun-matching-button")).click();
  await expect(page.locator(t("rerun-question"))).toHaveAttribute("data-count", "1");
  await page.locator(t("rerun-confirm")).click();
  // The operation goes into the address: its outcome stays above the list, across a reload.
  const progress = page.locator(`${t("bulk-operation")} ${t("operation-progress")}`);
  await expect(progress).toHaveAttribute("data-status", "succeeded", { timeout: 30_000 });
  await expect(progress).toHaveAttribute("data-total", "1");
  await expect(page).toHaveURL(/[?&]operation=[0-9a-f-]{36}/);
  await page.reload();
  await expect(page.locator(t("activation-row"))).toHaveCount(3);
  await expect(progress).toHaveAttribute("data-status", "succeeded");

  // With no filter it asks twice, and Cancel starts nothing.
  await open(page, "/activations");
  await page.locator(t("rerun-matching-button")).click();
  await expect(page.locator(t("rerun-question"))).toContainText("No filter is set");
  await page.locator(t("rerun-sure")).click();
  await expect(page.locator(t("rerun-confirm"))).toBeVisible();
  await page.locator(t("rerun-cancel")).click();
  await expect(page.locator(t("rerun-ask"))).toHaveCount(0);
  await open(page, `/activations?launch_setting=${encodeURIComponent(one)}`);
  await expect(page.locator(t("activation-row"))).toHaveCount(3);
});
