import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";

/** The demo-node binary scripts/test.sh builds. */
const DEMO_NODE = process.env.E2E_DEMO_NODE ?? path.resolve(__dirname, "../../target/debug/demo-node");

/** A demo node of an application of its own that only publishes demo events (every tenth one
 * poisoned) to `exchange` every `everyMs`, on the run's broker names (AM_PREFIX comes from
 * scripts/e2e.sh). */
export function startProducer(exchange: string, name: string, everyMs: number): ChildProcess {
  const producer = spawn(DEMO_NODE, [], {
    env: {
      ...process.env,
      AM_APP: `${name}-producer`,
      AM_HOST: `${name}-producer`,
      AM_CAPACITY: "1",
      AM_DEMO_PRODUCE: String(everyMs),
      AM_DEMO_EXCHANGES: exchange,
    },
    stdio: "ignore",
  });
  producer.on("error", (e) => console.error(`the demo producer did not start (${DEMO_NODE}): ${e}`));
  return producer;
}

/** A demo node serving application `app` as host `host`, on the run's broker names. */
export function startNode(app: string, host: string): ChildProcess {
  const node = spawn(DEMO_NODE, [], {
    env: { ...process.env, AM_APP: app, AM_HOST: host, AM_CAPACITY: "2" },
    stdio: "ignore",
  });
  node.on("error", (e) => console.error(`the demo node did not start (${DEMO_NODE}): ${e}`));
  return node;
}

/** Stops a producer (or node) and waits until it exited. */
export async function stopProducer(producer: ChildProcess) {
  if (producer.exitCode !== null || producer.signalCode !== null) return;
  const exited = new Promise((resolve) => producer.once("exit", resolve));
  producer.kill("SIGTERM");
  await exited;
}
