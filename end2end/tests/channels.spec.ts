import { APIResponse, expect, Page, test } from "@playwright/test";
import { appWithPool, loginAdmin, open, seed, t, uid } from "./catalog-helpers";

async function call(page: Page, method: string, path: string): Promise<APIResponse> {
  return page.request.fetch(path, { method });
}

test("a channel chooses its events, and a group gets a dead man's switch and a channel of its own, with the forms", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("chan");
  await seed(page, {
    ...appWithPool(app),
    agents: [{ application: app, id: "step", input: "standalone", concurrency: "ANY", overlap: "skip" }],
    launch_settings: [{ id: `${app}.a`, application: app, agent: "step", kind: "scheduled" }],
    schedule_groups: [{ id: `${app}.g`, application: app, cron: "0 2 * * *", time_zone: "UTC", members: [`${app}.a`] }],
  });

  // The application's webhook hears only breaker trips and lost nodes; its e-mail, everything.
  await open(page, `/applications/${app}`);
  await page.locator(t("field-webhook")).fill("http://127.0.0.1:9/hook");
  await page.locator(t("field-webhook-events-node_lost")).check();
  await page.locator(t("field-webhook-events-breaker_tripped")).check();
  await expect(page.locator(t("field-webhook-events-test"))).toHaveCount(0);
  await page.locator(t("save")).click();
  await expect(page.locator(t("form-saved"))).toBeVisible();
  const saved = await (await call(page, "GET", `/api/v1/applications/${app}`)).json();
  expect(saved.webhook_events).toEqual(["breaker_tripped", "node_lost"]);
  expect(saved.email_events ?? []).toEqual([]);
  await page.reload();
  await expect(page.locator(t("field-webhook-events-node_lost"))).toBeChecked();
  await expect(page.locator(t("field-webhook-events-schedule_missed"))).not.toBeChecked();

  // The group's switch: a mistyped or too short window is explained at the field.
  await open(page, `/schedule-groups/${app}.g`);
  const window = page.locator(t("field-expect-success-within"));
  await window.fill("soon");
  await page.locator(t("save")).click();
  await expect(page.locator(t("field-expect-success-within-error"))).toBeVisible();
  await window.fill("30s");
  await page.locator(t("save")).click();
  await expect(page.locator(t("field-expect-success-within-error"))).toContainText("at least 1m");
  await window.fill("26h");
  // The group's own channel, for what is told about the group: only its missed schedules.
  await page.locator(t("field-webhook")).fill("http://127.0.0.1:9/group-hook");
  await page.locator(t("field-webhook-events-schedule_missed")).check();
  await page.locator(t("save")).click();
  await expect(page.locator(t("form-saved"))).toBeVisible();
  const catalog = await (await call(page, "GET", "/api/v1/catalog")).json();
  const group = catalog.schedule_groups.find((g: { id: string }) => g.id === `${app}.g`);
  // Durations come back in their normal form.
  expect(group.expect_success_within).toBe("1day 2h");
  expect(group.webhook_url).toBe("http://127.0.0.1:9/group-hook");
  expect(group.webhook_events).toEqual(["schedule_missed"]);
  // Its tools: the write-only secret and Send test are there too.
  await expect(page.locator(t("webhook-tools"))).toBeVisible();
  await page.reload();
  await expect(window).toHaveValue("1day 2h");
});
