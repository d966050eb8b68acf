// The `kubernetes` integration: sets `spec.replicas` of the group's Deployment through the scale
// subresource (PATCH /apis/apps/v1/namespaces/{ns}/deployments/{name}/scale, a JSON merge patch),
// the one right the Helm chart's Role grants. Credentials: the pod's service account (token, CA
// and namespace under /var/run/secrets/kubernetes.io/serviceaccount, the API server from
// KUBERNETES_SERVICE_HOST/PORT), or a kubeconfig file (its current context).
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import type { AutoscalingIntegration } from "./config.ts";

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
const REQUEST_TIMEOUT_MS = 10_000;

type KubernetesIntegration = Extract<AutoscalingIntegration, { type: "kubernetes" }>;

export interface KubernetesCredentials {
  server: string;
  namespace: string;
  token?: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  insecure?: boolean;
}

/** The Deployment a group's workers run in when the config names none (the chart's naming). */
export function defaultDeploymentName(group: string): string {
  return `millrace-worker-${group.toLowerCase().replace(/_/g, "-")}`;
}

/** Where the API server is from inside a pod: KUBERNETES_SERVICE_HOST/PORT, read by the server's env.ts. */
export interface InClusterService {
  host: string;
  port: number;
}

function inCluster(service: InClusterService | undefined, dir = SERVICE_ACCOUNT_DIR): KubernetesCredentials {
  if (!service || !fs.existsSync(path.join(dir, "token"))) {
    throw new Error(
      "not running in a Kubernetes pod (no KUBERNETES_SERVICE_HOST or service account token): set integration.kubeconfig",
    );
  }
  const namespaceFile = path.join(dir, "namespace");
  return {
    server: `https://${service.host.includes(":") ? `[${service.host}]` : service.host}:${service.port}`,
    // Read on every call: the kubelet rotates the projected token.
    token: fs.readFileSync(path.join(dir, "token"), "utf8").trim(),
    ca: fs.readFileSync(path.join(dir, "ca.crt")),
    namespace: fs.existsSync(namespaceFile) ? fs.readFileSync(namespaceFile, "utf8").trim() : "default",
  };
}

interface Kubeconfig {
  "current-context"?: string;
  contexts?: { name: string; context: { cluster: string; user?: string; namespace?: string } }[];
  clusters?: {
    name: string;
    cluster: {
      server: string;
      "certificate-authority"?: string;
      "certificate-authority-data"?: string;
      "insecure-skip-tls-verify"?: boolean;
    };
  }[];
  users?: {
    name: string;
    user: {
      token?: string;
      tokenFile?: string;
      "client-certificate"?: string;
      "client-certificate-data"?: string;
      "client-key"?: string;
      "client-key-data"?: string;
    };
  }[];
}

/** The current context of a kubeconfig file: server, namespace and static credentials. */
export function fromKubeconfig(file: string): KubernetesCredentials {
  const config = parseYaml(fs.readFileSync(file, "utf8")) as Kubeconfig;
  const base = path.dirname(file);
  const context = config.contexts?.find((c) => c.name === config["current-context"])?.context;
  if (!context) throw new Error(`${file}: no current-context`);
  const cluster = config.clusters?.find((c) => c.name === context.cluster)?.cluster;
  if (!cluster?.server) throw new Error(`${file}: cluster ${context.cluster} has no server`);
  const user = config.users?.find((u) => u.name === context.user)?.user ?? {};
  const read = (data?: string, ref?: string) =>
    data ? Buffer.from(data, "base64") : ref ? fs.readFileSync(path.resolve(base, ref)) : undefined;
  return {
    server: cluster.server,
    namespace: context.namespace ?? "default",
    token:
      user.token ??
      (user.tokenFile ? fs.readFileSync(path.resolve(base, user.tokenFile), "utf8").trim() : undefined),
    ca: read(cluster["certificate-authority-data"], cluster["certificate-authority"]),
    cert: read(user["client-certificate-data"], user["client-certificate"]),
    key: read(user["client-key-data"], user["client-key"]),
    insecure: cluster["insecure-skip-tls-verify"] === true,
  };
}

/** The integration's kubeconfig when it names one, else the pod's service account. */
export function kubernetesCredentials(
  integration: KubernetesIntegration,
  service: InClusterService | undefined,
): KubernetesCredentials {
  return integration.kubeconfig ? fromKubeconfig(integration.kubeconfig) : inCluster(service);
}

/** Sets the Deployment's replicas; resolves with the replicas the API server answered. */
export async function scaleDeployment(
  integration: KubernetesIntegration,
  group: string,
  replicas: number,
  credentials: KubernetesCredentials,
): Promise<number> {
  const namespace = integration.namespace ?? credentials.namespace;
  const name = integration.deployment ?? defaultDeploymentName(group);
  const url = new URL(
    `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/deployments/${encodeURIComponent(name)}/scale`,
    credentials.server,
  );
  const body = JSON.stringify({ spec: { replicas } });
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const transport = url.protocol === "https:" ? https : http;
    const request = transport.request(
      url,
      {
        method: "PATCH",
        headers: {
          "content-type": "application/merge-patch+json",
          accept: "application/json",
          "content-length": Buffer.byteLength(body),
          ...(credentials.token ? { authorization: `Bearer ${credentials.token}` } : {}),
        },
        ca: credentials.ca,
        cert: credentials.cert,
        key: credentials.key,
        rejectUnauthorized: !credentials.insecure,
        timeout: REQUEST_TIMEOUT_MS,
      },
      (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => (text += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    request.on("timeout", () =>
      request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)),
    );
    request.on("error", reject);
    request.end(body);
  }).catch((error: Error) => {
    throw new Error(`Kubernetes API ${url.origin}: ${error.message}`);
  });
  if (status < 200 || status >= 300) {
    // The API server answers a Status object whose message says why (forbidden, not found…).
    let message = text.slice(0, 500);
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? message;
    } catch {
      // not JSON: keep the text
    }
    throw new Error(`scaling deployment ${namespace}/${name} answered ${status}: ${message}`);
  }
  return (JSON.parse(text) as { spec?: { replicas?: number } }).spec?.replicas ?? replicas;
}
