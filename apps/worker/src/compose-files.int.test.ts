// The compose files in docker/ (single node, HA, a custom-runtime group with an agent worker), as
// `docker-compose config` resolves them: no daemon is needed, so CI checks them (.ci/run installs
// docker-compose). What each role's container gets is asserted on the resolved configuration.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const compose = ["docker-compose", "docker compose"].find(
  (command) => spawnSync("sh", ["-c", `${command} version`], { stdio: "ignore" }).status === 0,
);

interface Service {
  build?: { dockerfile?: string; args?: Record<string, string> };
  image?: string;
  environment?: Record<string, string>;
  security_opt?: string[];
}

function resolved(file: string): Record<string, Service> {
  assert.ok(compose, "docker-compose (or docker compose) is needed: .ci/run installs it");
  const result = spawnSync("sh", ["-c", `${compose} -f docker/${file} config`], {
    cwd: root,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      MILLRACE_SECRET_KEY: "compose-key-0123456789abcdefghijklmnop",
      SUPERADMIN_EMAIL: "ops@example.com",
      SUPERADMIN_PASSWORD: "change-me-please",
      AGENT_TOKEN: "agent-token-from-the-server",
    },
  });
  assert.equal(result.status, 0, `${file}: ${result.stderr}`);
  return (parse(result.stdout) as { services: Record<string, Service> }).services;
}

const mode = (service: Service) => service.environment?.MODE;

describe("the compose files", () => {
  it("build each role from its own Dockerfile, and workers can run bubblewrap", () => {
    for (const file of ["docker-compose.yml", "docker-compose.ha.yml", "docker-compose.custom-runtime.yml"]) {
      const services = resolved(file);
      for (const [name, service] of Object.entries(services)) {
        if (mode(service) === "server")
          assert.match(service.build?.dockerfile ?? "", /Dockerfile\.server$/, name);
        if (mode(service) === "worker" || mode(service) === "agent") {
          assert.match(service.image ?? "", /^millrace-worker/, `${file} ${name}`);
          assert.ok(service.security_opt?.includes("seccomp=unconfined"), `${file} ${name}: user namespaces`);
        }
      }
    }
  });

  it("runs a custom-runtime group from its image and an agent worker without the database", () => {
    const services = resolved("docker-compose.custom-runtime.yml");
    const datascience = services.worker_datascience!;
    assert.match(datascience.build?.dockerfile ?? "", /Dockerfile\.datascience$/);
    assert.match(datascience.build?.args?.WORKER_IMAGE ?? "", /^millrace-worker:/);
    assert.equal(datascience.environment?.WORKER_GROUP, "datascience");

    const agent = services.agent!;
    assert.equal(mode(agent), "agent");
    assert.equal(agent.environment?.AGENT_TOKEN, "agent-token-from-the-server");
    assert.match(agent.environment?.BASE_INTERNAL_URL ?? "", /^http:\/\/server:8000/);
    // An agent holds neither the database's password nor the instance key.
    for (const variable of ["DATABASE_URL", "MILLRACE_SECRET_KEY"])
      assert.equal(agent.environment?.[variable], undefined, `agent has no ${variable}`);
  });
});
