import { defineConfig } from "@playwright/test";

// The manager is started by scripts/e2e.sh, which passes its address in BASE_URL.
export default defineConfig({
  testDir: "./tests",
  timeout: 30_000,
  // A hung suite fails in a bounded time instead of holding the whole run.
  globalTimeout: 15 * 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [["list"]],
  use: {
    baseURL: process.env.BASE_URL ?? "http://127.0.0.1:3000",
    headless: true,
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        // The test bundle is a 24 MB debug build of which a page runs a small part: compiled
        // function by function on first call instead of whole on every page load, the suite
        // takes about a quarter less time (docs/benchmarks.md, Waiting). Compilation only: what
        // the code does is the same.
        "--js-flags=--wasm-lazy-compilation",
      ],
    },
  },
});
