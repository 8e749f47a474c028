import { expect, test } from "@playwright/test";
import { ADMIN_PASSWORD, VIEWER_PASSWORD, hydrated, login } from "./helpers";

test("pages need a login", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.locator('[data-test="login-form"]')).toBeVisible();
});

test("an admin logs in through the real page and sees the dashboard with health", async ({ page }) => {
  await login(page, "admin", ADMIN_PASSWORD);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  await expect(page.locator('[data-test="current-user"]')).toContainText("admin");
  await expect(page.locator('[data-test="current-role"]')).toHaveText("admin");
  const db = page.locator('[data-test="health-database"]');
  await expect(db).toHaveAttribute("data-up", "true");
  await expect(page.locator('[data-test="health-broker"]')).toBeVisible();
  // Every section of the product is reachable from the navigation.
  for (const section of ["applications", "launch-settings", "schedule-groups", "dead-letters", "users"]) {
    await expect(page.locator(`[data-test="nav-${section}"]`)).toBeVisible();
  }
  await page.locator('[data-test="nav-pools"]').click();
  await expect(page).toHaveURL(/\/pools$/);
  await expect(page.locator("h1")).toHaveText("Pools");
});

test("a wrong password shows an error and keeps the user on the login page", async ({ page }) => {
  await login(page, "admin", "not-the-password");
  await expect(page.locator('[data-test="login-error"]')).toContainText("wrong user name or password");
  await expect(page).toHaveURL(/\/login$/);
  await page.goto("/");
  await expect(page).toHaveURL(/\/login$/);
});

test("logout ends the session", async ({ page }) => {
  await login(page, "viewer", VIEWER_PASSWORD);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  await expect(page.locator('[data-test="current-role"]')).toHaveText("viewer");
  await page.locator('[data-test="logout"]').click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto("/");
  await expect(page).toHaveURL(/\/login$/);
});

test("a cross-site form post is refused", async ({ request, baseURL }) => {
  const resp = await request.post(`${baseURL}/ui/login`, {
    headers: { Origin: "http://evil.example", "Content-Type": "application/x-www-form-urlencoded" },
    data: "name=admin&password=x",
  });
  expect(resp.status()).toBe(403);
});
