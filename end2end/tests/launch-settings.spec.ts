import { expect, test } from "@playwright/test";
import { appWithPool, loginAdmin, open, seed, t, uid } from "./catalog-helpers";

/** An application with a 5,000-value classifier, a messages agent and a standalone agent. */
async function seedTypedAgents(page: import("@playwright/test").Page) {
  const app = uid("ls");
  const values = Array.from({ length: 5000 }, (_, i) => {
    const n = String(i + 1).padStart(5, "0");
    return { code: `org-${n}`, label: `Organisation ${n}` };
  });
  await seed(page, {
    ...appWithPool(app),
    data_queues: [{ id: `${app}.in`, kind: "queue" }],
    classifiers: [{ application: app, name: "orgs", title: "Organisations", values }],
    agents: [
      {
        application: app, id: "export", title: "Export", input: "messages", data_queue: `${app}.in`,
        concurrency: "ANY", overlap: "skip",
        parameters: [
          { name: "batch_size", title: "Batch size", type: "integer", required: true, min: 1, max: 500 },
          { name: "prefix", title: "Prefix", type: "string", pattern: "[A-Z]{3}" },
          { name: "dry_run", title: "Dry run", type: "boolean", default: false },
          { name: "since", title: "Since", type: "date" },
          { name: "timeout", title: "Timeout", type: "duration", default: "30s" },
          { name: "orgs", title: "Organisations", type: "classifier(orgs)", array: true, required: true },
        ],
      },
      {
        application: app, id: "report", title: "Report", input: "standalone", concurrency: "ANY", overlap: "skip",
        parameters: [
          { name: "org", title: "Organisation", type: "classifier(orgs)", required: true },
          { name: "days", title: "Days", type: "integer", array: true, min: 1 },
        ],
      },
    ],
    schedule_groups: [{ id: `${app}.nightly`, application: app, cron: "0 2 * * *", time_zone: "UTC", members: [] }],
  });
  return app;
}

test("a stream launch setting with typed parameters and a classifier array", async ({ page }) => {
  await loginAdmin(page);
  const app = await seedTypedAgents(page);
  const id = `${app}.export.1`;

  await open(page, "/launch-settings/new");
  await page.locator(t("field-application")).selectOption(app);
  await page.locator(t("field-agent")).selectOption("export");
  await page.locator(t("field-kind")).selectOption("stream");
  await page.locator(t("field-id")).fill(id);

  // The form shows the schema's facts and checks values in the browser.
  await expect(page.locator(t("param-batch_size-facts"))).toContainText("required");
  await expect(page.locator(t("param-batch_size-facts"))).toContainText("max 500");
  await page.locator(t("param-batch_size-input")).fill("abc");
  await page.locator(t("param-batch_size-input")).blur();
  await expect(page.locator(t("param-batch_size-error"))).toContainText("expected an integer");
  await page.locator(t("param-batch_size-input")).fill("250");
  await page.locator(t("param-batch_size-input")).blur();
  await expect(page.locator(t("param-batch_size-error"))).toHaveCount(0);

  await page.locator(t("param-prefix-input")).fill("ab");
  await page.locator(t("param-dry_run-input")).selectOption("true");
  await page.locator(t("param-since-input")).fill("2024-05-01");

  // Classifier values come from a server-side search.
  await page.locator(t("param-orgs-search")).fill("00042");
  await page.locator(`${t("param-orgs-results")} [data-code="org-00042"]`).click();
  await page.locator(t("param-orgs-search")).fill("Organisation 01234");
  await page.locator(`${t("param-orgs-results")} [data-code="org-01234"]`).click();
  await expect(page.locator(t("param-orgs-value"))).toHaveCount(2);
  await page.locator(t("param-orgs-up")).nth(1).click();
  await expect(page.locator(t("param-orgs-value")).first()).toHaveAttribute("data-code", "org-01234");

  await page.locator(t("field-threshold")).fill("12");
  await expect(page.locator(t("derived-n"))).toContainText("N = 4");
  await page.locator(t("field-max-deliveries")).fill("5");
  await page.locator(t("field-dead-letter")).selectOption("park");
  await page.locator(t("field-max-run-time")).fill("2h");
  await page.locator(t("field-on-lost")).selectOption("fail");
  await page.locator(t("field-start-timeout")).fill("soon");

  // A value breaking the pattern blocks the save and is shown at its field; nothing is lost.
  await page.locator(t("save")).click();
  await expect(page.locator(t("param-prefix-error"))).toContainText("pattern");
  await expect(page).toHaveURL(/\/launch-settings\/new$/);
  await expect(page.locator(t("param-batch_size-input"))).toHaveValue("250");
  await expect(page.locator(t("field-start-timeout-error"))).toBeVisible();
  await page.locator(t("field-start-timeout")).fill("45s");
  await page.locator(t("param-prefix-input")).fill("ABC");
  await page.locator(t("save")).click();
  await expect(page).toHaveURL(new RegExp(`/launch-settings/${id.replace(/\./g, "\\.")}\\?created$`));

  // Reloaded from the server, with the order of the array and the labels of the codes.
  await page.reload();
  await expect(page.locator(t("param-batch_size-input"))).toHaveValue("250");
  await expect(page.locator(t("param-orgs-value")).first()).toHaveAttribute("data-code", "org-01234");
  await expect(page.locator(t("param-orgs-value")).nth(1)).toHaveAttribute("data-code", "org-00042");
  await expect(page.locator(t("param-orgs-value")).first()).toContainText("Organisation 01234");
  await expect(page.locator(t("derived-n"))).toContainText("N = 4");
  const saved = await (await page.request.get(`/api/v1/launch-settings/${id}`)).json();
  expect(saved.parameters).toEqual({
    batch_size: 250, prefix: "ABC", dry_run: true, since: "2024-05-01", orgs: ["org-01234", "org-00042"],
  });
  expect(saved.stream_mode).toBe("asap");
  expect(saved.failure_threshold).toBe(12);
  expect(saved.retry.max_deliveries).toBe(5);
  expect(saved.dead_letter.policy).toBe("park");
  expect(saved.recovery.on_lost).toBe("fail");
  expect(saved.recovery.max_run_time).toBeTruthy();
  expect(saved.recovery.start_timeout).toBe("45s");

  // Operators disable and enable it; the status follows.
  await expect(page.locator(t("current-status"))).toHaveText("waiting");
  // Disable asks first; Cancel leaves it running.
  await page.locator(t("toggle-enabled")).click();
  await page.locator(t("disable-no")).click();
  await expect(page.locator(t("disable-ask"))).toHaveCount(0);
  await expect(page.locator(t("current-status"))).toHaveText("waiting");
  await page.locator(t("toggle-enabled")).click();
  await page.locator(t("disable-yes")).click();
  await expect(page.locator(t("current-status"))).toHaveText("disabled");
  await page.reload();
  await expect(page.locator(t("current-status"))).toHaveText("disabled");
  await open(page, `/launch-settings?application=${app}`);
  await expect(page.locator(`${t("list-row")}[data-id="${id}"]`)).toContainText("disabled");

  // The application shows what its nodes published; classifiers are browsed by search.
  await open(page, `/applications/${app}`);
  await expect(page.locator(t("application-agents"))).toContainText("export");
  await page.locator(`${t("application-classifiers")} summary`).click();
  await page.locator(t("classifier-orgs-search")).fill("04999");
  await expect(page.locator(`${t("classifier-orgs-results")} [data-code]`)).toHaveCount(1);
});

test("a scheduled launch setting is saved with its group and a server error lands at its field", async ({ page }) => {
  await loginAdmin(page);
  const app = await seedTypedAgents(page);
  const id = `${app}.report.1`;

  await open(page, "/launch-settings/new");
  await page.locator(t("field-application")).selectOption(app);
  await page.locator(t("field-agent")).selectOption("report");
  // A standalone agent only runs by schedule.
  await expect(page.locator(`${t("field-kind")} option`)).toHaveCount(1);
  await page.locator(t("field-id")).fill(id);
  await page.locator(t("param-org-search")).fill("org-00007");
  await page.locator(`${t("param-org-results")} [data-code="org-00007"]`).click();
  await page.locator(t("param-days-add")).click();
  await page.locator(t("param-days-add")).click();
  await page.locator(t("param-days-input")).nth(0).fill("1");
  await page.locator(t("param-days-input")).nth(1).fill("7");

  // Without a group the server refuses, and says so next to the groups.
  await page.locator(t("save")).click();
  await expect(page.locator(t("form-error"))).toBeVisible();
  await expect(page.locator(t("param-days-input")).nth(1)).toHaveValue("7");
  await expect(page.locator(`${t("param-org-value")}[data-code="org-00007"]`)).toBeVisible();

  await page.locator(`${t("group-choice")}[data-group="${app}.nightly"]`).check();
  await page.locator(t("save")).click();
  await expect(page).toHaveURL(new RegExp(`/launch-settings/${id.replace(/\./g, "\\.")}\\?created$`));
  const saved = await (await page.request.get(`/api/v1/launch-settings/${id}`)).json();
  expect(saved.parameters).toEqual({ org: "org-00007", days: [1, 7] });
  await open(page, `/schedule-groups/${app}.nightly`);
  await expect(page.locator(t("member"))).toHaveCount(1);
  await expect(page.locator(t("member"))).toHaveAttribute("data-id", id);
});
