import { expect, test } from "@playwright/test";
import { ADMIN_PASSWORD, hydrated, login } from "./helpers";
import { loginAdmin, open, t, uid } from "./catalog-helpers";

test("every page hydrates under the Content-Security-Policy without a violation", async ({ page }) => {
  const violations: string[] = [];
  page.on("console", (m) => {
    if (m.text().includes("Content Security Policy")) violations.push(m.text());
  });
  const first = await page.goto("/login");
  const csp = first?.headers()["content-security-policy"] ?? "";
  expect(csp).toContain("'nonce-");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(first?.headers()["x-content-type-options"]).toBe("nosniff");
  await hydrated(page);
  await loginAdmin(page);
  for (const path of ["/", "/applications", "/launch-settings", "/nodes", "/broker", "/activations", "/failures", "/dead-letters", "/notifications", "/audit", "/users"]) {
    await open(page, path);
  }
  expect(violations).toEqual([]);
});

test("a user sees their sessions and signs another browser out", async ({ page, browser }) => {
  await loginAdmin(page);
  const name = uid("sid");
  const password = "a long enough password";
  const origin = new URL(page.url()).origin;
  const created = await page.request.post(`${origin}/api/v1/users`, {
    headers: { Origin: origin, "Content-Type": "application/json" },
    data: JSON.stringify({ name, role: "viewer", password }),
  });
  expect(created.status()).toBe(201);

  // Two browsers of the same user.
  const laptop = await (await browser.newContext()).newPage();
  const phone = await (await browser.newContext()).newPage();
  for (const p of [laptop, phone]) {
    await login(p, name, password);
    await expect(p).toHaveURL(/\/$/);
  }
  await open(laptop, "/users");
  const rows = laptop.locator(t("session-row"));
  await expect(rows).toHaveCount(2);
  await expect(laptop.locator(`${t("session-row")}[data-current="true"]`)).toHaveCount(1);
  await laptop.locator(t("session-revoke")).click();
  await expect(rows).toHaveCount(1);
  await expect(laptop.locator(`${t("session-row")}[data-current="true"]`)).toHaveCount(1);

  // The phone is signed out at once; the laptop goes on.
  await phone.goto("/");
  await expect(phone).toHaveURL(/\/login$/);
  await open(laptop, "/users");
  await expect(rows).toHaveCount(1);
  await laptop.context().close();
  await phone.context().close();
});
