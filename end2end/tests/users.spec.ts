import { expect, test } from "@playwright/test";
import { hydrated, login } from "./helpers";
import { loginAdmin, open, t, uid } from "./catalog-helpers";

test("an admin creates a viewer who signs in, is refused a change, changes their password and keeps a token", async ({ page }) => {
  await loginAdmin(page);
  const name = uid("vera");
  await open(page, "/users");
  // A password against the policy is refused by name ...
  await page.locator(t("new-user-name")).fill(name);
  await page.locator(t("new-user-password")).fill("short");
  await page.locator(t("new-user-create")).click();
  await expect(page.locator(t("new-user-error"))).toContainText("at least 12 characters");
  // ... an empty one is generated and shown once.
  await page.locator(t("new-user-password")).fill("");
  await page.locator(t("new-user-create")).click();
  const generated = (await page.locator(t("generated-password")).textContent())?.trim() ?? "";
  expect(generated.length).toBeGreaterThanOrEqual(12);
  const row = page.locator(`${t("user-row")}[data-name="${name}"]`);
  await expect(row).toHaveAttribute("data-role", "viewer");
  await expect(row.locator(t("user-state"))).toHaveText("active");

  await page.locator(t("logout")).click();
  await expect(page).toHaveURL(/\/login$/);
  await login(page, name, generated);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);

  // A viewer sees no user management and no edit controls; the server refuses a direct POST.
  await open(page, "/users");
  await expect(page.locator(t("user-table"))).toHaveCount(0);
  await expect(page.locator(t("new-user"))).toHaveCount(0);
  const origin = new URL(page.url()).origin;
  const create = await page.request.post(`${origin}/ui/create_user`, {
    headers: { Origin: origin, "Content-Type": "application/json" },
    data: JSON.stringify({ name: uid("mallory"), role: "admin", password: "" }),
  });
  expect(create.status()).toBe(403);
  const api = await page.request.post(`${origin}/api/v1/users`, {
    headers: { Origin: origin, "Content-Type": "application/json" },
    data: JSON.stringify({ name: uid("mallory"), role: "admin", password: "a long enough password" }),
  });
  expect(api.status()).toBe(403);

  // Their own password: the current one is required.
  await page.locator(t("own-current")).fill("not the password");
  await page.locator(t("own-new")).fill("a password of my own");
  await page.locator(t("own-again")).fill("a password of my own");
  await page.locator(t("own-change")).click();
  await expect(page.locator(t("own-error"))).toContainText("current password");
  await page.locator(t("own-current")).fill(generated);
  await page.locator(t("own-new")).fill("a password of my own");
  await page.locator(t("own-again")).fill("a password of my own");
  await page.locator(t("own-change")).click();
  await expect(page.locator(t("own-changed"))).toBeVisible();

  // Their own API token: shown once, works, then revoked it stops at once.
  await page.locator(t("new-token-name")).fill("grafana");
  await page.locator(t("new-token-create")).click();
  const secret = (await page.locator(t("new-token-secret")).textContent())?.trim() ?? "";
  expect(secret).toMatch(/^amt_/);
  const tokenRow = page.locator(`${t("token-row")}[data-name="grafana"]`);
  await expect(tokenRow.locator(t("token-role"))).toHaveText("viewer");
  const bearer = { headers: { Authorization: `Bearer ${secret}` } };
  expect((await page.request.get(`${origin}/api/v1/nodes`, bearer)).status()).toBe(200);
  await tokenRow.locator(t("token-revoke")).click();
  await expect(tokenRow).toHaveAttribute("data-revoked", "true");
  await expect(tokenRow.locator(t("token-state"))).toHaveText("revoked");
  expect((await page.request.get(`${origin}/api/v1/nodes`, bearer)).status()).toBe(401);

  // The admin disables them: their session stops at once.
  const viewerPage = page;
  const adminContext = await page.context().browser()!.newContext({ baseURL: origin });
  const admin = await adminContext.newPage();
  await loginAdmin(admin);
  await open(admin, "/users");
  const adminRow = admin.locator(`${t("user-row")}[data-name="${name}"]`);
  await adminRow.locator(t("user-toggle")).click();
  await expect(adminRow).toHaveAttribute("data-disabled", "true");
  await expect(adminRow.locator(t("user-state"))).toHaveText("disabled");
  await viewerPage.goto("/users");
  await expect(viewerPage).toHaveURL(/\/login$/);

  // Its history: created, password changed, disabled.
  await adminRow.locator(t("user-history")).click();
  await expect(admin.locator(`${t("audit-row")}[data-action="change_password"]`)).toHaveCount(1);
  await expect(admin.locator(`${t("audit-row")}[data-action="update"] ${t("audit-change")}[data-path="disabled"]`)).toHaveCount(1);
  await adminContext.close();
});
