import { expect, Page, test } from "@playwright/test";
import { violations } from "./axe";
import { loginAdmin, open } from "./catalog-helpers";

// Every page of the navigation and one page of each kind of entry (the newest of each, from the
// API: the suite's earlier tests made them), at the widths operators use: no table header, badge
// or id breaks inside a word, and nothing is wider than the window. Measured on the element
// boxes: a text that wraps has line boxes at more than one height.
const PAGES = [
  "/", "/applications", "/nodes", "/pools", "/data-queues", "/broker", "/agents",
  "/launch-settings", "/schema-drift", "/schedule-groups", "/activations", "/failures",
  "/dead-letters", "/operations", "/search?q=e2e",
];
const WIDTHS: [number, number][] = [[1024, 768], [1280, 900], [1920, 1080]];

/** The first of a list the API answers (an array, or a page of `items`). */
async function first(page: Page, path: string): Promise<any | undefined> {
  const r = await page.request.get(`${new URL(page.url()).origin}${path}`);
  expect(r.status(), `${path}: ${await r.text()}`).toBe(200);
  const body = await r.json();
  return (Array.isArray(body) ? body : body.items)?.[0];
}

/** A page of each kind of entry that exists: activation, launch setting, group, agent, dead
 * letter, operation, a failure drill-down. */
async function detailPages(page: Page): Promise<string[]> {
  const out: string[] = [];
  const activation = await first(page, "/api/v1/activations?limit=1");
  if (activation) out.push(`/activations/${activation.id}`);
  const ls = await first(page, "/api/v1/launch-settings");
  if (ls) out.push(`/launch-settings/${ls.id}`, `/failures/${ls.id}`);
  const group = await first(page, "/api/v1/schedule-groups");
  if (group) out.push(`/schedule-groups/${group.id}`);
  const agent = await first(page, "/api/v1/agents");
  if (agent) out.push(`/agents/${agent.application}/${agent.id}`);
  const dead = await first(page, "/api/v1/dead-letters?limit=1");
  if (dead) out.push(`/dead-letters/${dead.id}`);
  const operation = await first(page, "/api/v1/operations?limit=1");
  if (operation) out.push(`/operations/${operation.id}`);
  return out;
}

/** The texts of headers, badges and ids that wrap onto a second line. */
async function wrapped(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const tokens = document.querySelectorAll<HTMLElement>(
      "table.list th, .pill, .badge, .nowrap",
    );
    for (const el of tokens) {
      const text = (el.textContent ?? "").trim();
      if (!text || el.offsetParent === null) continue;
      // The line boxes of its text only: a control beside the text (a header's checkbox) is a
      // box of another height on the same line.
      const tops = new Set<number>();
      const texts = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = texts.nextNode(); node; node = texts.nextNode()) {
        if (!(node.textContent ?? "").trim()) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        for (const r of range.getClientRects()) {
          if (r.width > 0 && r.height > 0) tops.add(Math.round(r.top));
        }
      }
      if (tops.size > 1) out.push(`${el.tagName.toLowerCase()}.${el.className}: "${text}"`);
    }
    return out;
  });
}

/** What is wider than the viewport: the page itself, or a table hiding columns in its own scroll. */
async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth + 1) {
      out.push(`page is ${root.scrollWidth} px wide in a ${root.clientWidth} px viewport`);
    }
    for (const wrap of document.querySelectorAll<HTMLElement>(".table-wrap")) {
      if (wrap.offsetParent === null) continue;
      if (wrap.scrollWidth > wrap.clientWidth + 1) {
        const t = wrap.querySelector("table")?.getAttribute("data-test") ?? "table";
        // The columns' widths say which one to slim.
        const columns = [...wrap.querySelectorAll("th")]
          .map((th) => `${(th.textContent ?? "").trim() || "·"} ${th.offsetWidth}`)
          .join(", ");
        out.push(`${t} needs ${wrap.scrollWidth} px of ${wrap.clientWidth} px (${columns})`);
      }
    }
    return out;
  });
}

for (const [width, height] of WIDTHS) {
  test(`headers, badges and ids stay on one line at ${width}×${height}`, async ({ page }) => {
    test.setTimeout(120_000);
    await page.setViewportSize({ width, height });
    await loginAdmin(page);
    const broken: string[] = [];
    for (const path of [...PAGES, ...(await detailPages(page))]) {
      await open(page, path);
      for (const w of await wrapped(page)) broken.push(`${path} ${w}`);
    }
    expect(broken, broken.join("\n")).toEqual([]);
  });

  test(`pages and tables fit at ${width}×${height}`, async ({ page }) => {
    test.setTimeout(120_000);
    await page.setViewportSize({ width, height });
    await loginAdmin(page);
    const wide: string[] = [];
    for (const path of [...PAGES, ...(await detailPages(page))]) {
      await open(page, path);
      for (const w of await overflowing(page)) wide.push(`${path} ${w}`);
    }
    expect(wide, wide.join("\n")).toEqual([]);
  });
}

// The pages of entries, which the accessibility spec (run first, before any run exists) cannot
// reach: no axe-core violation on any of them.
test("every kind of entry's page has no axe-core violation", async ({ page }) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await loginAdmin(page);
  const pages = await detailPages(page);
  test.info().annotations.push({ type: "pages", description: pages.join(" ") });
  const found: string[] = [];
  for (const path of pages) {
    await open(page, path);
    for (const v of await violations(page)) found.push(`${path} ${v}`);
  }
  expect(found, found.join("\n")).toEqual([]);
});
