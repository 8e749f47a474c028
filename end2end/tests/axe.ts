import { Page } from "@playwright/test";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

// axe-core from npm, injected through `page.evaluate`, so the page's Content-Security-Policy
// stays as it is in production.
const AXE_SOURCE = readFileSync(createRequire(__filename).resolve("axe-core/axe.min.js"), "utf8");

type Violation = { id: string; impact: string | null; help: string; nodes: { target: string[] }[] };

/** The violations axe finds on the page as it is now (every rule it runs by default: WCAG 2
 * A/AA and best practices), one line each. */
export async function violations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const found: Violation[] = await page.evaluate(async () => {
    // @ts-expect-error: injected above
    const result = await window.axe.run(document);
    return result.violations;
  });
  return found.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.help} at ${v.nodes
        .slice(0, 3)
        .map((n) => n.target.join(" "))
        .join(", ")}`,
  );
}
