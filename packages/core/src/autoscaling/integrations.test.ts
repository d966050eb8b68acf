// The `kubernetes` integration against a local HTTP server that answers like the API server's
// Deployment scale subresource (path, verb, content type, body and bearer token checked), and the
// `script` integration's command (argv and environment it receives, its failures).
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { runCommand } from "./integrations.ts";
import {
  defaultDeploymentName,
  fromKubeconfig,
  kubernetesCredentials,
  scaleDeployment,
} from "./kubernetes.ts";

interface Seen {
  method: string;
  url: string;
  contentType: string | undefined;
  authorization: string | undefined;
  body: unknown;
}

describe("the kubernetes integration", () => {
  let server: http.Server;
  let dir: string;
  let kubeconfig: string;
  const seen: Seen[] = [];
  // Deployments the fake API server knows, by namespace/name: their replicas.
  const deployments = new Map([
    ["ops/millrace-worker-burst", 1],
    ["ops/gpu-workers", 0],
  ]);

  before(async () => {
    server = http.createServer((req, res) => {
      let text = "";
      req.on("data", (chunk: Buffer) => (text += chunk.toString()));
      req.on("end", () => {
        const body = text ? (JSON.parse(text) as unknown) : null;
        seen.push({
          method: req.method!,
          url: req.url!,
          contentType: req.headers["content-type"],
          authorization: req.headers.authorization,
          body,
        });
        const answer = (status: number, object: object) => {
          res.writeHead(status, { "content-type": "application/json" });
          res.end(JSON.stringify(object));
        };
        const status = (code: number, reason: string, message: string) =>
          answer(code, { kind: "Status", apiVersion: "v1", status: "Failure", message, reason, code });
        if (req.headers.authorization !== "Bearer test-token")
          return status(401, "Unauthorized", "Unauthorized");
        const match = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/deployments\/([^/]+)\/scale$/.exec(req.url!);
        if (!match) return status(404, "NotFound", "the server could not find the requested resource");
        const key = `${match[1]}/${match[2]}`;
        if (!deployments.has(key)) return status(404, "NotFound", `deployments.apps "${match[2]}" not found`);
        if (req.method !== "PATCH") return status(405, "MethodNotAllowed", "method not allowed");
        if (req.headers["content-type"] !== "application/merge-patch+json")
          return status(415, "UnsupportedMediaType", `the body of the request was in an unknown format`);
        const replicas = (body as { spec?: { replicas?: unknown } })?.spec?.replicas;
        if (typeof replicas !== "number") return status(422, "Invalid", "spec.replicas: Required value");
        deployments.set(key, replicas);
        answer(200, {
          kind: "Scale",
          apiVersion: "autoscaling/v1",
          metadata: { name: match[2], namespace: match[1] },
          spec: { replicas },
          status: { replicas: replicas, selector: "app=millrace-worker" },
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-kube-"));
    fs.writeFileSync(path.join(dir, "token"), "test-token\n");
    kubeconfig = path.join(dir, "kubeconfig");
    fs.writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "current-context: test",
        "contexts:",
        "  - name: test",
        "    context: { cluster: local, user: autoscaler, namespace: ops }",
        "  - name: other",
        "    context: { cluster: nowhere, user: nobody }",
        "clusters:",
        "  - name: local",
        `    cluster: { server: "http://127.0.0.1:${(server.address() as AddressInfo).port}" }`,
        "users:",
        "  - name: autoscaler",
        "    user: { tokenFile: token }",
      ].join("\n"),
    );
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("reads the current context of a kubeconfig", () => {
    const credentials = fromKubeconfig(kubeconfig);
    assert.equal(credentials.namespace, "ops");
    assert.equal(credentials.token, "test-token");
    assert.match(credentials.server, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("PATCHes the scale subresource of the group's Deployment with a merge patch", async () => {
    seen.length = 0;
    const replicas = await scaleDeployment(
      { type: "kubernetes", kubeconfig },
      "burst",
      3,
      fromKubeconfig(kubeconfig),
    );
    assert.equal(replicas, 3);
    assert.deepEqual(seen, [
      {
        method: "PATCH",
        url: "/apis/apps/v1/namespaces/ops/deployments/millrace-worker-burst/scale",
        contentType: "application/merge-patch+json",
        authorization: "Bearer test-token",
        body: { spec: { replicas: 3 } },
      },
    ]);
    assert.equal(deployments.get("ops/millrace-worker-burst"), 3);
    const gpu = { type: "kubernetes", kubeconfig, deployment: "gpu-workers" } as const;
    await scaleDeployment(gpu, "gpu", 0, kubernetesCredentials(gpu, undefined));
    assert.equal(seen.at(-1)!.url, "/apis/apps/v1/namespaces/ops/deployments/gpu-workers/scale");
    assert.equal(defaultDeploymentName("Big_Jobs"), "millrace-worker-big-jobs");
  });

  it("fails with the API server's message", async () => {
    await assert.rejects(
      scaleDeployment(
        { type: "kubernetes", kubeconfig, namespace: "elsewhere" },
        "burst",
        2,
        fromKubeconfig(kubeconfig),
      ),
      /scaling deployment elsewhere\/millrace-worker-burst answered 404: deployments.apps "millrace-worker-burst" not found/,
    );
    const credentials = { ...fromKubeconfig(kubeconfig), token: "stolen" };
    await assert.rejects(
      scaleDeployment({ type: "kubernetes" }, "burst", 2, credentials),
      /answered 401: Unauthorized/,
    );
  });

  it("says so outside a pod when no kubeconfig is given", () => {
    assert.throws(
      () => kubernetesCredentials({ type: "kubernetes" }, undefined),
      /not running in a Kubernetes pod/,
    );
    assert.throws(
      () => kubernetesCredentials({ type: "kubernetes" }, { host: "10.0.0.1", port: 443 }),
      /no KUBERNETES_SERVICE_HOST or service account token/,
    );
  });
});

describe("the script integration's command", () => {
  it("gets the group, the count, the reason and the event type as arguments, and a bare environment", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-scale-"));
    const out = path.join(dir, "out");
    try {
      await runCommand(
        [
          "/bin/bash",
          "-c",
          `printf '%s|' "$@" > ${out}; echo "env:$MILLRACE_DESIRED_WORKERS:\${DATABASE_URL-none}" >> ${out}`,
          "scale",
        ],
        ["burst", "3", "5 job(s) waiting; $(rm -rf /)", "scale_out"],
        5000,
      );
      assert.equal(
        fs.readFileSync(out, "utf8"),
        "burst|3|5 job(s) waiting; $(rm -rf /)|scale_out|env:3:none\n",
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails with the command's output when it exits non-zero, or when it runs too long", async () => {
    await assert.rejects(
      runCommand(
        ["/bin/bash", "-c", "echo no quota left >&2; exit 3"],
        ["burst", "3", "r", "scale_out"],
        5000,
      ),
      /\/bin\/bash exited with 3: no quota left/,
    );
    await assert.rejects(runCommand(["/bin/sleep", "5"], [], 200), /did not finish within 0.2 s/);
    await assert.rejects(runCommand(["/nonexistent/scale"], [], 1000), /ENOENT/);
  });
});
