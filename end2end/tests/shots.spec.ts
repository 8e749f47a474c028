import { test } from "@playwright/test";
import { loginAdmin, open } from "./catalog-helpers";

// Screenshots for a person to look at; run with SHOTS=1.
test.skip(!process.env.SHOTS, "screenshots only on request");

test("screenshots", async ({ page }) => {
  await loginAdmin(page);
  // The demo catalog, so the pages have something to show.
  if (process.env.SHOTS_SEED) {
    const origin = new URL(page.url()).origin;
    const fs = await import("fs");
    await page.request.put(`${origin}/api/v1/catalog`, {
      headers: { Origin: origin, "Content-Type": "application/json" },
      data: fs.readFileSync(process.env.SHOTS_SEED, "utf8"),
    });
  }
  for (const [w, h] of [[1280, 900], [390, 844]]) {
    await page.setViewportSize({ width: w, height: h });
    for (const path of (process.env.SHOTS ?? "").split(",")) {
      await open(page, path);
      await page.waitForTimeout(300);
      await page.screenshot({ path: `/tmp/shots/${w}${path.replace(/[\/?=&]/g, "_")}.png`, fullPage: true });
    }
  }
});
