import { expect, test } from "@playwright/test";
import { loginAdmin, open } from "./catalog-helpers";

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
