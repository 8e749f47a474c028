import { APIResponse, expect, Page } from "@playwright/test";
import { ADMIN_PASSWORD, hydrated, login } from "./helpers";

/** A suffix that makes ids unique per test run. */
export function uid(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
}

/** Logs in as admin through the page; the session cookie then also authenticates API calls. */
export async function loginAdmin(page: Page) {
  await login(page, "admin", ADMIN_PASSWORD);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
}

async function call(page: Page, method: string, path: string, body?: unknown): Promise<APIResponse> {
  const origin = new URL(page.url()).origin;
  const resp = await page.request.fetch(`${origin}${path}`, {
    method,
    headers: { Origin: origin, "Content-Type": "application/json" },
    data: body === undefined ? undefined : JSON.stringify(body),
  });
  return resp;
}

/** Adds entities to the catalog through the JSON API (export, merge, import: all or nothing). */
export async function seed(page: Page, parts: Record<string, unknown[]>) {
  const get = await call(page, "GET", "/api/v1/catalog");
  expect(get.status()).toBe(200);
  const catalog = await get.json();
  for (const [list, items] of Object.entries(parts)) {
    catalog[list] = [...(catalog[list] ?? []), ...items];
  }
  const put = await call(page, "PUT", "/api/v1/catalog", catalog);
  if (put.status() !== 200) {
    throw new Error(`seeding failed: ${put.status()} ${await put.text()}`);
  }
}

/** Opens a page and waits until it is interactive. */
export async function open(page: Page, path: string) {
  await page.goto(path);
  await hydrated(page);
}

export const t = (id: string) => `[data-test="${id}"]`;

/** A pool and an application using it. */
export function appWithPool(app: string) {
  return {
    pools: [{ id: `${app}-pool`, title: "Pool", hosts: ["host-a", "host-b"] }],
    applications: [{ id: app, title: `App ${app}`, default_pool: `${app}-pool` }],
  };
}
