import { expect, test } from "@playwright/test";
import { appWithPool, loginAdmin, open, seed, t, uid } from "./catalog-helpers";

// Find anything from any page: `/` reaches the search box, a part of an id or title finds the
// entity, one click opens it. Lists say how things are: a schedule in words, status badges.
test("the search box finds a launch setting by part of its title, from any page", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("find");
  const ls = `${app}.nightly-export`;
  const group = `${app}.nightly`;
  await seed(page, {
    ...appWithPool(app),
    agents: [{ application: app, id: "export", title: "Export", input: "standalone", concurrency: "ANY", overlap: "allow" }],
    launch_settings: [{ id: ls, title: `Invoices of ${app} to the ledger`, application: app, agent: "export", kind: "scheduled" }],
    schedule_groups: [{ id: group, title: "Nightly", application: app, cron: "0 2 * * *", time_zone: "Europe/Paris", members: [ls] }],
  });

  await open(page, "/activations");
  await page.keyboard.press("/");
  const box = page.locator(t("global-search"));
  await expect(box).toBeFocused();
  // A slash typed into a field stays in the field.
  await box.press("/");
  await expect(box).toHaveValue("/");
  await box.fill(`invoices of ${app}`.toUpperCase());
  await box.press("Enter");
  await expect(page).toHaveURL(/\/search\?q=/);
  const hit = page.locator(`${t("hit")}[data-id="${ls}"]`);
  await expect(hit).toHaveAttribute("data-kind", "launch setting");
  await hit.locator(t("hit-link")).click();
  await expect(page).toHaveURL(new RegExp(`/launch-settings/${ls.replace(/\./g, "\\.")}$`));

  // Nothing found says so.
  await open(page, `/search?q=${encodeURIComponent(`${app}-nothing-like-this`)}`);
  await expect(page.locator(t("no-hits"))).toBeVisible();

  // The groups list reads the schedule in words, the launch settings list carries state.
  // (The scheduler plans the new group's next fire within a few seconds.)
  const row = page.locator(`${t("list-row")}[data-id="${group}"]`);
  await expect(async () => {
    await open(page, `/schedule-groups?q=${encodeURIComponent(app)}`);
    await expect(row.locator('td[data-label="Next fire"] time')).toHaveAttribute("datetime", /T/, { timeout: 1000 });
  }).toPass({ timeout: 20_000 });
  await expect(row.locator('td[data-label="Schedule"]')).toContainText("every day at 02:00 Europe/Paris");
  await expect(row.locator(t("list-title"))).toHaveText("Nightly");
  await open(page, `/launch-settings?q=${encodeURIComponent(app)}`);
  const lsRow = page.locator(`${t("list-row")}[data-id="${ls}"]`);
  await expect(lsRow.locator(`td[data-label="Status"] ${t("list-badge")}`)).toHaveText("waiting");
  await expect(lsRow.locator('td[data-label="Next fire"] time')).toHaveAttribute("datetime", /T/);
  await expect(lsRow.locator('td[data-label="Last run"]')).not.toContainText("failure");
});

test("a search that names one thing whole goes straight to it: a host to its runs", async ({ page }) => {
  await loginAdmin(page);
  const app = uid("jump");
  await seed(page, appWithPool(app));
  await open(page, "/");
  const box = page.locator(t("global-search"));
  await box.fill("host-a");
  await box.press("Enter");
  await expect(page).toHaveURL(/\/activations\?host=host-a$/);
  await expect(page.locator(t("filter-host"))).toHaveValue("host-a");
  // Part of a name lists what matches instead.
  await open(page, "/search?q=host-");
  for (const host of ["host-a", "host-b"]) {
    await expect(page.locator(`${t("hit")}[data-kind="host"][data-id="${host}"]`)).toBeVisible();
  }
});
