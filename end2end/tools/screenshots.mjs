// Screenshots for a person to look at — a tool, not a test (the suite skips nothing).
// Usage, against a running manager:
//   BASE_URL=http://127.0.0.1:3000 ADMIN_PASSWORD=... PAGES=/,/launch-settings \
//     [SEED=demo/catalog.json] node end2end/tools/screenshots.mjs
// Writes /tmp/shots/<width><page>.png at 1280 and 390 px.
import { chromium } from "@playwright/test";
import { mkdirSync, readFileSync } from "node:fs";

const base = process.env.BASE_URL ?? "http://127.0.0.1:3000";
const pages = (process.env.PAGES ?? "/").split(",");
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const page = await browser.newPage();
const hydrated = () => page.waitForSelector("body[data-hydrated]");
await page.goto(`${base}/login`);
await hydrated();
await page.fill('[data-test="login-name"]', "admin");
await page.fill('[data-test="login-password"]', process.env.ADMIN_PASSWORD ?? "");
await page.click('[data-test="login-submit"]');
await page.waitForURL(`${base}/`);
if (process.env.SEED) {
  const resp = await page.request.put(`${base}/api/v1/catalog`, {
    headers: { Origin: base, "Content-Type": "application/json" },
    data: readFileSync(process.env.SEED, "utf8"),
  });
  if (!resp.ok()) throw new Error(`seeding failed: ${resp.status()} ${await resp.text()}`);
}
mkdirSync("/tmp/shots", { recursive: true });
for (const [width, height] of [[1280, 900], [390, 844]]) {
  await page.setViewportSize({ width, height });
  for (const path of pages) {
    await page.goto(`${base}${path}`);
    await hydrated();
    await page.screenshot({ path: `/tmp/shots/${width}${path.replace(/[/?=&]/g, "_")}.png`, fullPage: true });
  }
}
await browser.close();
