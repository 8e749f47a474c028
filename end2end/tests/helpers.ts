import { expect, Page } from "@playwright/test";

export const ADMIN_PASSWORD = process.env.E2E_ADMIN_PASSWORD ?? "e2e-admin-password";
export const VIEWER_PASSWORD = process.env.E2E_VIEWER_PASSWORD ?? "e2e-viewer-password";

/** Waits until the page has hydrated, so clicks reach Leptos' handlers. */
export async function hydrated(page: Page) {
  await expect(page.locator("body")).toHaveAttribute("data-hydrated", "true");
}

export async function login(page: Page, name: string, password: string) {
  await page.goto("/login");
  await hydrated(page);
  await page.locator('[data-test="login-name"]').fill(name);
  await page.locator('[data-test="login-password"]').fill(password);
  await page.locator('[data-test="login-submit"]').click();
}
