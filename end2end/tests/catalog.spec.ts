import { expect, test } from "@playwright/test";
import { loginAdmin, open, seed, t, uid } from "./catalog-helpers";

test("an admin creates a pool, a data queue, an application and an agent with the forms", async ({ page }) => {
  await loginAdmin(page);
  const pool = uid("pool");
  const queue = uid("queue");
  const app = uid("app");
  const agent = uid("agent");

  await open(page, "/pools/new");
  await page.locator(t("field-id")).fill(pool);
  await page.locator(t("field-title")).fill("Batch hosts");
  await page.locator(t("field-hosts")).fill("batch-1\nbatch-2");
  await page.locator(t("save")).click();
  await expect(page).toHaveURL(new RegExp(`/pools/${pool}\\?created$`));
  await expect(page.locator(t("form-saved"))).toHaveText("Saved.");
  await expect(page.locator(t("field-title"))).toHaveValue("Batch hosts");
  await expect(page.locator(t("field-hosts"))).toHaveValue("batch-1\nbatch-2");

  await open(page, "/data-queues/new");
  await page.locator(t("field-id")).fill(queue);
  await page.locator(t("field-kind")).selectOption("topic");
  await page.locator(t("field-delay")).fill("5m");
  await page.locator(t("save")).click();
  await expect(page).toHaveURL(new RegExp(`/data-queues/${queue}\\?created$`));

  await open(page, "/applications/new");
  await page.locator(t("field-id")).fill(app);
  await page.locator(t("field-title")).fill("Billing");
  await page.locator(t("field-default-pool")).selectOption(pool);
  await page.locator(t("save")).click();
  await expect(page).toHaveURL(new RegExp(`/applications/${app}\\?created$`));

  await open(page, "/agents/new");
  await page.locator(t("field-application")).selectOption(app);
  await page.locator(t("field-id")).fill(agent);
  await page.locator(t("field-input")).selectOption("messages");
  await page.locator(t("field-data-queue")).selectOption(queue);
  await page.locator(t("field-concurrency")).selectOption("MANY");
  await page.locator(t("save")).click();
  await expect(page).toHaveURL(new RegExp(`/agents/${app}/${agent}\\?created$`));
  await expect(page.locator(t("field-concurrency"))).toHaveValue("MANY");

  // The lists show them; the filter lives in the URL, so the view survives a reload.
  await open(page, `/agents?application=${app}`);
  await expect(page.locator(t("list-row"))).toHaveCount(1);
  await expect(page.locator(`${t("list-row")}[data-id="${agent}"]`)).toContainText("MANY");
  await page.reload();
  await expect(page.locator(t("list-row"))).toHaveCount(1);
  await open(page, "/pools");
  await page.locator(t("filter-q")).fill(pool);
  await page.locator(t("filter-apply")).click();
  await expect(page).toHaveURL(new RegExp(`q=${pool}`));
  await expect(page.locator(t("list-row"))).toHaveCount(1);
  await expect(page.locator(t("list-row"))).toContainText("batch-1, batch-2");

  // Deleting something in use is refused with the reason.
  await open(page, `/pools/${pool}`);
  await page.locator(t("delete")).click();
  await page.locator(t("delete-confirm")).click();
  await expect(page.locator(t("form-error"))).toContainText("in use");
});

test("a rejected form keeps what was typed and shows the error next to the field", async ({ page }) => {
  await loginAdmin(page);
  await open(page, "/data-queues/new");
  await page.locator(t("field-id")).fill("Not A Valid Id");
  await page.locator(t("field-title")).fill("Orders to export");
  await page.locator(t("field-address")).fill("orders.exchange");
  await page.locator(t("save")).click();
  await expect(page.locator(t("field-id-error"))).toBeVisible();
  await expect(page.locator(t("field-id"))).toHaveValue("Not A Valid Id");
  await expect(page.locator(t("field-title"))).toHaveValue("Orders to export");
  await expect(page.locator(t("field-address"))).toHaveValue("orders.exchange");
  await expect(page).toHaveURL(/\/data-queues\/new$/);
  // Correcting the field saves.
  const id = uid("orders");
  await page.locator(t("field-id")).fill(id);
  await page.locator(t("save")).click();
  await expect(page).toHaveURL(new RegExp(`/data-queues/${id}\\?created$`));
  await expect(page.locator(t("field-address"))).toHaveValue("orders.exchange");
});

test("lists are paginated on the server and the URL carries the page and the filter", async ({ page }) => {
  await loginAdmin(page);
  const prefix = uid("many");
  await seed(page, {
    pools: Array.from({ length: 30 }, (_, i) => ({ id: `${prefix}-${String(i).padStart(2, "0")}`, hosts: [] })),
  });
  await open(page, `/pools?q=${prefix}`);
  await expect(page.locator(t("list-row"))).toHaveCount(25);
  await expect(page.locator(t("list-summary"))).toHaveText("1–25 of 30");
  await page.locator(t("page-next")).click();
  await expect(page).toHaveURL(new RegExp(`q=${prefix}&page=2`));
  await expect(page.locator(t("list-row"))).toHaveCount(5);
  await expect(page.locator(t("list-row")).first()).toHaveAttribute("data-id", `${prefix}-25`);
  await page.reload();
  await expect(page.locator(t("list-summary"))).toHaveText("26–30 of 30");
  await page.locator(t("page-prev")).click();
  await expect(page.locator(t("list-row"))).toHaveCount(25);
});
