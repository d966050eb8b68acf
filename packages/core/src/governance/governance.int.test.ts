// The governance report's FLOWS column and the tags of flows' inline steps.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { archiveFlow, createFlow } from "../flows/store.ts";
import { createTestMember, createTestServices, type TestServices } from "../testing.ts";
import type { Membership } from "../membership.ts";
import { instanceGovernance, workspaceGovernance } from "./report.ts";

describe("governance of flows", () => {
  let services: TestServices;
  let admin: Membership;

  const step = (id: string, language: string, content: string, tag?: string) => ({
    id,
    value: { type: "rawscript", language, content, input_transforms: {}, ...(tag ? { tag } : {}) },
  });

  before(async () => {
    services = await createTestServices();
    ({ membership: admin } = await createTestMember(services, "govflows"));
    const me = admin.principal.username;
    await createFlow(services, admin, {
      path: `u/${me}/nested`,
      value: {
        modules: [
          step("a", "bash", "echo a\n"),
          {
            id: "b",
            value: {
              type: "forloopflow",
              iterator: { type: "javascript", expr: "[1]" },
              skip_failures: false,
              modules: [
                {
                  id: "c",
                  value: {
                    type: "branchone",
                    branches: [
                      { expr: "true", modules: [step("d", "python3", "def main():\n    return 1\n")] },
                    ],
                    default: [step("e", "deno", "export function main() { return 1 }\n", "flow")],
                  },
                },
              ],
            },
          },
        ],
      },
    });
    await createFlow(services, admin, {
      path: `u/${me}/old`,
      value: { modules: [step("a", "bun", "export function main() {}\n")] },
    });
    await archiveFlow(services, admin, `u/${me}/old`);
  });
  after(() => services?.close());

  it("counts the deployed flows (archived ones not) and lists the tags of their inline steps, nested ones too", async () => {
    const [ws] = (await workspaceGovernance(services, admin)).workspaces;
    assert.equal(ws!.id, "govflows");
    assert.equal(ws!.flows, 1);
    assert.deepEqual(ws!.tags, ["bash", "flow", "python3"]);
    const superadmin = { ...admin.principal, isSuperAdmin: true };
    const all = await instanceGovernance(services, superadmin);
    assert.equal(all.workspaces.find((w) => w.id === "govflows")?.flows, 1);
    assert.deepEqual(all.tags.python3, ["govflows"]);
  });
});
