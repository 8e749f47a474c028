import { expect, Page, test } from "@playwright/test";
import { loginAdmin, open } from "./catalog-helpers";

// Every page of the navigation, with the demo running, at the two widths operators use: no
// table header, badge or id breaks inside a word. Measured on the element boxes: a text that
// wraps has line boxes at more than one height.
const PAGES = [
  "/", "/applications", "/nodes", "/pools", "/data-queues", "/broker", "/agents",
  "/launch-settings", "/schema-drift", "/schedule-groups", "/activations", "/failures",
  "/dead-letters", "/operations", "/search?q=e2e",
];
const WIDTHS: [number, number][] = [[1024, 768], [1280, 900]];

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
      const range = document.createRange();
      range.selectNodeContents(el);
      const tops = new Set<number>();
      for (const r of range.getClientRects()) {
        if (r.width > 0 && r.height > 0) tops.add(Math.round(r.top));
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
    for (const path of PAGES) {
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
    for (const path of PAGES) {
      await open(page, path);
      for (const w of await overflowing(page)) wide.push(`${path} ${w}`);
    }
    expect(wide, wide.join("\n")).toEqual([]);
  });
}
