import { APIResponse, expect, Page, test } from "@playwright/test";
import { createHmac } from "node:crypto";
import { createServer, IncomingMessage, Server } from "node:http";
import { AddressInfo } from "node:net";
import { loginAdmin, open, t, uid } from "./catalog-helpers";
import { startProducer, stopProducer } from "./producer";

// The real demo node (scripts/e2e.sh) serves this application on this host; its `poison` agent
// fails on messages saying "poison".
const APP = process.env.E2E_NODE_APP ?? "e2e-demo";
const HOST = process.env.E2E_NODE_HOST ?? "e2e-node-a";

type Received = { headers: IncomingMessage["headers"]; body: Buffer };

/** A webhook receiver on a free local port that answers 200 and keeps what it got. */
async function receiver(): Promise<{ server: Server; url: string; got: Received[] }> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, url: `http://127.0.0.1:${port}/hook`, got };
}

async function call(page: Page, method: string, path: string, body?: unknown): Promise<APIResponse> {
  const origin = new URL(page.url()).origin;
  return page.request.fetch(`${origin}${path}`, {
    method,
    headers: { Origin: origin, "Content-Type": "application/json" },
    data: body === undefined ? undefined : JSON.stringify(body),
  });
}

test("a webhook is tested, then told of a breaker trip, and the page shows it delivered", async ({ page }) => {
  test.setTimeout(120_000);
  const hook = await receiver();
  try {
    await loginAdmin(page);
    const id = uid("notify");
    const ls = `${APP}.${id}`;
    const queue = `${APP}.${id}.in`;
    const catalog = await (await call(page, "GET", "/api/v1/catalog")).json();
    if (!catalog.applications.some((a: { id: string }) => a.id === APP)) {
      catalog.pools.push({ id: `${APP}-pool`, title: "The e2e node", hosts: [HOST] });
      catalog.applications.push({ id: APP, title: "E2E demo node", default_pool: `${APP}-pool` });
    }
    catalog.data_queues.push({ id: queue, title: "Events of the notification test", kind: "topic" });
    const poison = catalog.agents.find((a: { application: string; id: string }) => a.application === APP && a.id === "poison");
    if (poison) {
      poison.data_queue = queue;
    } else {
      catalog.agents.push({
        application: APP, id: "poison", title: "Poison", input: "messages", data_queue: queue,
        concurrency: "ANY", overlap: "allow",
      });
    }
    catalog.launch_settings.push({
      id: ls, application: APP, agent: "poison", kind: "stream", stream_mode: "asap", failure_threshold: 1,
      retry: { initial_delay: "200ms", multiplier: 2.0, max_delay: "1s", max_deliveries: 3 },
    });
    const put = await call(page, "PUT", "/api/v1/catalog", catalog);
    expect(put.status(), await put.text()).toBe(200);

    // The launch setting's own webhook, set in its form, with a secret.
    await open(page, `/launch-settings/${ls}`);
    await page.locator(t("field-webhook")).fill(hook.url);
    await page.locator(t("save")).click();
    await expect(page.locator(t("form-saved"))).toBeVisible();
    const secret = "e2e-webhook-secret";
    await page.locator(t("webhook-secret")).fill(secret);
    await page.locator(t("webhook-secret-set")).click();
    await expect(page.locator(t("webhook-secret-saved"))).toBeVisible();
    // The secret is never shown back.
    const saved = await (await call(page, "GET", `/api/v1/launch-settings/${ls}`)).json();
    expect(JSON.stringify(saved)).not.toContain(secret);

    // Send test: the endpoint's answer is shown, and the receiver got a signed body.
    await page.locator(t("webhook-test")).click();
    const answer = page.locator(t("webhook-test-answer"));
    await expect(answer).toHaveAttribute("data-status", "delivered", { timeout: 15_000 });
    await expect(answer).toContainText("signed");
    const test0 = hook.got.find((r) => r.headers["x-agent-manager-event"] === "test");
    expect(test0).toBeTruthy();
    const expected = "sha256=" + createHmac("sha256", secret).update(test0!.body).digest("hex");
    expect(test0!.headers["x-agent-manager-signature"]).toBe(expected);

    // A poisoned message trips the breaker on the real node: the webhook is told, with the link.
    const producer = startProducer(queue, id, 250);
    try {
      await expect
        .poll(() => hook.got.filter((r) => r.headers["x-agent-manager-event"] === "breaker_tripped").length, {
          timeout: 60_000,
        })
        .toBeGreaterThanOrEqual(1);
    } finally {
      await stopProducer(producer);
    }
    const trip = hook.got.find((r) => r.headers["x-agent-manager-event"] === "breaker_tripped")!;
    const notice = JSON.parse(trip.body.toString());
    expect(notice.launch_setting).toBe(ls);
    expect(notice.host).toBe(HOST);
    expect(notice.url).toContain(`/failures/${ls}/`);
    expect(trip.headers["x-agent-manager-signature"]).toBe(
      "sha256=" + createHmac("sha256", secret).update(trip.body).digest("hex"),
    );

    // The Notifications page lists it as delivered, filtered by the launch setting in the URL.
    await open(page, `/notifications?launch_setting=${encodeURIComponent(ls)}&event=breaker_tripped`);
    const row = page.locator(t("notification-row")).first();
    await expect(row).toHaveAttribute("data-status", "delivered");
    await expect(row).toHaveAttribute("data-attempts", "1");
    await expect(row.locator(t("notification-link"))).toContainText(`Breaker tripped for ${ls}`);
    await expect(page.locator(t("filter-event"))).toHaveValue("breaker_tripped");

    // Resend sends it again.
    const before = hook.got.length;
    await row.locator(t("notification-resend")).click();
    await expect.poll(() => hook.got.length, { timeout: 15_000 }).toBeGreaterThan(before);
  } finally {
    hook.server.close();
  }
});
