import { expect, test } from "@playwright/test";
import { appWithPool, loginAdmin, open, seed, t, uid } from "./catalog-helpers";

test("the first Tab offers a skip link that lands on the page, and each page has a title of its own", async ({ page }) => {
  await loginAdmin(page);
  await open(page, "/launch-settings");
  await expect(page).toHaveTitle("Launch settings · Agent Manager");

  await page.keyboard.press("Tab");
  const skip = page.locator('[data-test="skip-link"]');
  await expect(skip).toBeFocused();
  await expect(skip).toBeVisible();
  await page.keyboard.press("Enter");
  await expect(page.locator("main#main")).toBeFocused();
  // The next Tab goes on from the page, not from the header's controls.
  await page.keyboard.press("Tab");
  const inMain = await page.evaluate(() => !!document.activeElement?.closest("main#main"));
  expect(inMain).toBe(true);

  for (const [path, title] of [
    ["/", "Dashboard · Agent Manager"],
    ["/broker", "Broker · Agent Manager"],
    ["/launch-settings/new", "New launch setting · Agent Manager"],
    ["/audit", "Audit log · Agent Manager"],
  ]) {
    await open(page, path);
    await expect(page, path).toHaveTitle(title);
  }
});

test("the login page has its own title", async ({ page }) => {
  await page.goto("/login");
  await expect(page).toHaveTitle("Log in · Agent Manager");
});

test("? lists the shortcuts, and Esc closes the list, leaves the search box and cancels an open question", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("kb");
  const ls = `${app}.nightly`;
  await seed(page, {
    ...appWithPool(app),
    agents: [{ application: app, id: "sleep", title: "Sleep", input: "standalone", concurrency: "ANY", overlap: "allow", parameters: [] }],
    launch_settings: [{ id: ls, application: app, agent: "sleep", kind: "scheduled" }],
    schedule_groups: [{ id: `${app}.yearly`, application: app, cron: "0 0 1 1 *", time_zone: "UTC", members: [ls] }],
  });
  await open(page, `/launch-settings/${ls}`);

  await page.keyboard.press("?");
  const list = page.locator(t("shortcuts"));
  await expect(list).toBeVisible();
  await expect(list).toContainText("Esc");
  await expect(page.locator(t("shortcuts-close"))).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(list).toHaveCount(0);
  await expect(page.locator("main#main")).toBeFocused();

  // In the search box, `?` is typed, and Esc leaves the box.
  await page.keyboard.press("/");
  await expect(page.locator(t("global-search"))).toBeFocused();
  await page.keyboard.press("?");
  await expect(list).toHaveCount(0);
  await page.keyboard.press("Escape");
  await expect(page.locator(t("global-search"))).not.toBeFocused();

  // Disable asks; Esc is its Cancel: the question goes, the setting stays enabled, and focus
  // is back on the button that asked.
  await page.locator(t("toggle-enabled")).click();
  await expect(page.locator(t("disable-ask"))).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.locator(t("disable-ask"))).toHaveCount(0);
  await expect(page.locator(t("current-status"))).toHaveText("waiting");
  await expect(page.locator(t("toggle-enabled"))).toBeFocused();
});
