import { expect, test } from "@playwright/test";
import { appWithPool, loginAdmin, open, seed, t, uid } from "./catalog-helpers";

async function order(page: import("@playwright/test").Page): Promise<string[]> {
  return page.locator(t("member")).evaluateAll((els) => els.map((e) => e.getAttribute("data-id") ?? ""));
}

test("a group is built, reordered by drag-and-drop and by keyboard, and keeps its order", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("grp");
  const ls = (id: string, agent: string) => ({ id: `${app}.${id}`, application: app, agent, kind: "scheduled" });
  await seed(page, {
    ...appWithPool(app),
    agents: [
      { application: app, id: "step", input: "standalone", concurrency: "ANY", overlap: "skip" },
      { application: app, id: "wide", input: "standalone", concurrency: "MANY", overlap: "skip" },
    ],
    launch_settings: [ls("a", "step"), ls("b", "step"), ls("c", "step"), ls("d", "step"), ls("m", "wide")],
    schedule_groups: [
      { id: `${app}.g1`, application: app, cron: "0 2 * * *", time_zone: "UTC", members: [`${app}.a`, `${app}.b`, `${app}.c`] },
      { id: `${app}.g2`, application: app, cron: "0 3 * * *", time_zone: "UTC", members: [`${app}.d`] },
      { id: `${app}.g3`, application: app, cron: "0 4 * * *", time_zone: "UTC", members: [`${app}.m`] },
    ],
  });
  const [a, b, c, d] = ["a", "b", "c", "d"].map((x) => `${app}.${x}`);

  await open(page, `/schedule-groups/${app}.g1`);
  expect(await order(page)).toEqual([a, b, c]);
  await expect(page.locator(t("member-position"))).toHaveText(["1", "2", "3"]);

  // Only eligible launch settings can be added: same application, scheduled, same mode.
  const choices = await page.locator(`${t("member-choice")} option`).evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value));
  expect(choices).toEqual([d]);
  await page.locator(t("member-add")).click();
  expect(await order(page)).toEqual([a, b, c, d]);

  // Drag c onto a: c goes first.
  await page.locator(`${t("member")}[data-id="${c}"]`).dragTo(page.locator(`${t("member")}[data-id="${a}"]`));
  expect(await order(page)).toEqual([c, a, b, d]);
  await expect(page.locator(t("unsaved"))).toBeVisible();

  // Keyboard: focus c's "move down" and press Enter twice; focus follows the member.
  await page.locator(`${t("member")}[data-id="${c}"] ${t("member-down")}`).focus();
  await page.keyboard.press("Enter");
  await expect.poll(() => order(page)).toEqual([a, c, b, d]);
  await expect(page.locator(t("order-announcement"))).toHaveText(`${c} is now number 2 of 4`);
  await page.keyboard.press("Enter");
  await expect.poll(() => order(page)).toEqual([a, b, c, d]);
  await page.locator(`${t("member")}[data-id="${d}"] ${t("member-up")}`).focus();
  await page.keyboard.press("Enter");
  await expect.poll(() => order(page)).toEqual([a, b, d, c]);
  await expect(page.locator(t("member-position"))).toHaveText(["1", "2", "3", "4"]);

  await page.locator(t("save")).click();
  await expect(page.locator(t("form-saved"))).toBeVisible();
  await page.reload();
  expect(await order(page)).toEqual([a, b, d, c]);
});

test("the cron preview shows the next five fire times and explains a bad expression", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("cron");
  await seed(page, appWithPool(app));
  await open(page, "/schedule-groups/new");
  await page.locator(t("field-application")).selectOption(app);
  await page.locator(t("field-id")).fill(`${app}.weekly`);
  await page.locator(t("field-cron")).fill("61 2 * * *");
  await expect(page.locator(t("field-cron-error"))).toContainText("minute");
  await expect(page.locator(t("fire-preview-error"))).toBeVisible();
  await page.locator(t("field-cron")).fill("0 6 * * MON");
  await page.locator(t("field-time-zone")).fill("Europe/Paris");
  await expect(page.locator(t("fire-time"))).toHaveCount(5);
  for (const text of await page.locator(t("fire-time")).allTextContents()) {
    expect(text).toMatch(/^Mon .* 06:00:00 CES?T$/);
  }
  await page.locator(t("field-time-zone")).fill("Mars/Olympus");
  await expect(page.locator(t("field-time-zone-error"))).toBeVisible();
  await page.locator(t("field-time-zone")).fill("UTC");
  await page.locator(t("field-misfire")).selectOption("skip");
  await page.locator(t("save")).click();
  await expect(page).toHaveURL(new RegExp(`/schedule-groups/${app}\\.weekly\\?created$`));
  await expect(page.locator(t("field-misfire"))).toHaveValue("skip");
});
