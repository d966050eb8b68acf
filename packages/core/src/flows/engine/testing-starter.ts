// A stand-in for a server that starts flows, run as a child process by the flow crash tests
// (apps/worker/src/flows-crash.int.test.ts): it starts flow previews one after the other as
// USER_ID in WORKSPACE, printing each flow job's id once its start committed, until SIGKILL.
import { createDb, createPool } from "@millrace/db";
import { startBoss } from "../../jobs/boss.ts";
import { JobEvents } from "../../jobs/events.ts";
import { getUserPrincipal } from "../../users.ts";
import { requireMembership } from "../../workspaces.ts";
import { runFlowPreview } from "./run.ts";

// eslint-disable-next-line no-restricted-properties
const { DATABASE_URL: databaseUrl, USER_ID: userId, WORKSPACE: workspace, FLOW: flow } = process.env;
if (!databaseUrl || !userId || !workspace || !flow) {
  console.error("DATABASE_URL, USER_ID, WORKSPACE and FLOW are required");
  process.exit(2);
}

const pool = createPool(databaseUrl, { max: 2, applicationName: "flow-starter" });
const boss = await startBoss(databaseUrl, "worker");
const ctx = {
  db: createDb(pool),
  pool,
  boss,
  events: new JobEvents(databaseUrl),
  limits: { defaultTimeoutSecs: 60, maxTimeoutSecs: 3600 },
};
const principal = await getUserPrincipal(ctx, userId);
if (!principal) throw new Error(`no user ${userId}`);
const membership = await requireMembership(ctx, principal, workspace);
console.log("starter ready");
for (let i = 0; ; i++) {
  const id = await runFlowPreview(ctx, membership, { value: JSON.parse(flow), args: { n: i } });
  console.log(`started ${id}`);
}
