import { expect, Page, test } from "@playwright/test";
import { violations } from "./axe";
import { appWithPool, loginAdmin, open, seed, uid } from "./catalog-helpers";

// axe-core over every page of the navigation and a page of each kind of catalog entry: no
// violation of any rule axe runs by default (WCAG 2 A/AA and best practices). The pages of
// runs, dead letters and operations are checked by layout.spec.ts, once earlier tests made some.
const PAGES = [
  "/", "/applications", "/nodes", "/pools", "/data-queues", "/broker", "/agents",
  "/launch-settings", "/schema-drift", "/schedule-groups", "/activations", "/failures",
  "/dead-letters", "/operations", "/search?q=e2e", "/notifications", "/audit", "/users",
  "/applications/new", "/pools/new", "/data-queues/new", "/agents/new", "/launch-settings/new",
  "/schedule-groups/new",
];

/** Every page of the navigation and one entry of each kind, with what axe finds on each. */
async function everyPage(page: Page): Promise<string[]> {
  await page.setViewportSize({ width: 1280, height: 900 });
  await loginAdmin(page);
  // One entry of each kind, for their own pages.
  const app = uid("a11y");
  await seed(page, {
    ...appWithPool(app),
    data_queues: [{ id: `${app}.events`, kind: "topic" }],
  });
  const pages = [
    ...PAGES,
    `/applications/${app}`,
    `/pools/${app}-pool`,
    `/data-queues/${app}.events`,
  ];
  const found: string[] = [];
  for (const path of pages) {
    await open(page, path);
    for (const v of await violations(page)) found.push(`${path} ${v}`);
  }
  return found;
}

test("every page has no axe-core violation", async ({ page }) => {
  test.setTimeout(180_000);
  const found = await everyPage(page);
  expect(found, found.join("\n")).toEqual([]);
});

// The dark theme follows the system setting: its colours must hold the same contrast.
test("every page has no axe-core violation in the dark theme", async ({ page }) => {
  test.setTimeout(180_000);
  await page.emulateMedia({ colorScheme: "dark" });
  const found = await everyPage(page);
  const background = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  expect(background, "the dark theme applies").toBe("rgb(17, 21, 29)");
  expect(found, found.join("\n")).toEqual([]);
});
