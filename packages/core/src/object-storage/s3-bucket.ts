import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { AwsClient } from "aws4fetch";
import { AppError, invalidInput } from "../errors.ts";

/**
 * An `s3` resource's value, as Windmill's S3Resource names its fields (the builtin `s3` type).
 * `endPoint` is a host (`minio.internal:9000`), a URL (`http://minio.internal:9000`) or empty for
 * AWS itself.
 */
export interface S3Connection {
  bucket: string;
  region: string;
  endPoint: string;
  useSSL: boolean;
  pathStyle: boolean;
  accessKey?: string;
  secretKey?: string;
  port?: number;
}

/** Reads an `s3` resource's value; `field` names the setting or argument it came from. */
export function parseS3Connection(value: unknown, field: string): S3Connection {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalidInput(field, "the resource's value is not an S3 connection (a JSON object with a bucket)");
  const v = value as Record<string, unknown>;
  const text = (name: string): string | undefined => {
    const raw = v[name];
    if (raw === undefined || raw === null || raw === "") return undefined;
    if (typeof raw !== "string") throw invalidInput(field, `the resource's ${name} must be a string`);
    return raw;
  };
  const bucket = text("bucket");
  if (!bucket) throw invalidInput(field, "the resource has no bucket");
  const port = v.port === undefined || v.port === null || v.port === "" ? undefined : Number(v.port);
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536))
    throw invalidInput(field, "the resource's port must be a whole number from 1 to 65535");
  const region = text("region") ?? "us-east-1";
  return {
    bucket,
    region,
    endPoint: text("endPoint") ?? "",
    useSSL: v.useSSL !== false,
    pathStyle: v.pathStyle === true,
    ...(text("accessKey") ? { accessKey: text("accessKey") } : {}),
    ...(text("secretKey") ? { secretKey: text("secretKey") } : {}),
    ...(port !== undefined ? { port } : {}),
  };
}

/** The store's base URL: the endpoint with its scheme and port, or AWS's regional endpoint. */
function endpointUrl(connection: S3Connection): URL {
  const scheme = connection.useSSL ? "https" : "http";
  const raw = connection.endPoint || `s3.${connection.region}.amazonaws.com`;
  const url = new URL(/^[a-z]+:\/\//i.test(raw) ? raw : `${scheme}://${raw}`);
  if (connection.port && !url.port) url.port = String(connection.port);
  return url;
}

/** Percent-encodes a key for a URL path, segment by segment (S3 keys keep their slashes). */
function encodeKey(key: string): string {
  return key
    .split("/")
    .map((segment) =>
      encodeURIComponent(segment).replace(
        /[!'()*]/g,
        (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
      ),
    )
    .join("/");
}

/** What the store answered when it refused: its error code (`NoSuchKey`, `AccessDenied`…). */
async function storeErrorCode(response: Response): Promise<string> {
  const body = await response.text().catch(() => "");
  return /<Code>([^<]{1,64})<\/Code>/.exec(body)?.[1] ?? `HTTP ${response.status}`;
}

/** 169.254.0.0/16 and fe80::/10: where clouds answer instance metadata, never an object store. */
function isLinkLocal(address: string): boolean {
  if (isIP(address) === 4) return address.startsWith("169.254.");
  const lower = address.toLowerCase();
  return /^fe[89ab]/.test(lower) || lower.startsWith("::ffff:169.254.") || lower === "fd00:ec2::254";
}

/**
 * The server makes these requests for its callers, to an endpoint any developer may name in a
 * resource: a link-local address (the cloud's metadata service, with the server's own
 * credentials) is refused, whatever name resolves to it. Private and loopback addresses stay
 * allowed: a self-hosted MinIO usually lives there.
 */
async function refuseMetadataEndpoint(host: string, via: string): Promise<void> {
  const bare = host.replace(/^\[|\]$/g, "");
  const addresses = isIP(bare)
    ? [bare]
    : (await lookup(bare, { all: true }).catch(() => [])).map((a) => a.address);
  if (addresses.some(isLinkLocal))
    throw new AppError("FORBIDDEN", `object storage ${via}: the endpoint ${host} is a link-local address`);
}

/**
 * One bucket of an S3-compatible store, signed with SigV4 (aws4fetch). Errors never quote the
 * credentials; they name the resource (`via`) whose connection failed.
 */
export class S3Bucket {
  private readonly client: AwsClient;
  private readonly base: URL;
  readonly connection: S3Connection;
  private readonly via: string;
  private endpointChecked: Promise<void> | null = null;

  constructor(connection: S3Connection, via: string) {
    this.connection = connection;
    this.via = via;
    this.base = endpointUrl(connection);
    this.client = new AwsClient({
      accessKeyId: connection.accessKey ?? "",
      secretAccessKey: connection.secretKey ?? "",
      service: "s3",
      region: connection.region,
      // aws4fetch retries ten times by default; none here: a dead endpoint answers at once, and
      // an upload's body is a stream that cannot be sent twice. The client decides to try again.
      retries: 0,
    });
  }

  /** The endpoint as host[:port], as Windmill's S3Resource gives `endPoint` to clients. */
  endpointHost(): string {
    return this.base.host;
  }

  endpointUsesTls(): boolean {
    return this.base.protocol === "https:";
  }

  objectUrl(key: string): string {
    const base = new URL(this.base);
    if (this.connection.pathStyle) {
      return `${base.origin}${base.pathname.replace(/\/$/, "")}/${encodeURIComponent(this.connection.bucket)}/${encodeKey(key)}`;
    }
    base.hostname = `${this.connection.bucket}.${base.hostname}`;
    return `${base.origin}${base.pathname.replace(/\/$/, "")}/${encodeKey(key)}`;
  }

  private async send(key: string, init: RequestInit): Promise<Response> {
    this.endpointChecked ??= refuseMetadataEndpoint(new URL(this.objectUrl(key)).hostname, this.via);
    await this.endpointChecked;
    try {
      // No redirect is followed: one could lead the server to where the endpoint check said no.
      return await this.client.fetch(this.objectUrl(key), { ...init, redirect: "manual" });
    } catch (error) {
      const code = (error as { cause?: { code?: unknown } }).cause?.code;
      throw new AppError(
        "UPSTREAM_FAILED",
        `object storage ${this.via}: cannot reach ${this.base.host}${typeof code === "string" ? ` (${code})` : ""}`,
      );
    }
  }

  private async refused(response: Response, key: string): Promise<never> {
    const code = await storeErrorCode(response);
    if (response.status === 404 && code !== "NoSuchBucket")
      throw new AppError("NOT_FOUND", `file_key: no file ${key} in the object storage`, "file_key");
    throw new AppError(
      "UPSTREAM_FAILED",
      `object storage ${this.via}: the store refused (${code}) for bucket ${this.connection.bucket}`,
    );
  }

  /** Writes one object; `body` is streamed when its length is known. */
  async put(
    key: string,
    body: ReadableStream<Uint8Array> | Uint8Array,
    options: { contentType?: string; contentDisposition?: string; contentLength?: number },
  ): Promise<void> {
    const headers: Record<string, string> = {};
    if (options.contentType) headers["content-type"] = options.contentType;
    if (options.contentDisposition) headers["content-disposition"] = options.contentDisposition;
    if (options.contentLength !== undefined) headers["content-length"] = String(options.contentLength);
    const response = await this.send(key, {
      method: "PUT",
      headers,
      body: body as RequestInit["body"],
      ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
    } as RequestInit);
    if (!response.ok) await this.refused(response, key);
    await response.body?.cancel();
  }

  /** The object's answer, its body unread (the caller streams it on). */
  async get(key: string): Promise<Response> {
    const response = await this.send(key, { method: "GET" });
    if (!response.ok) await this.refused(response, key);
    return response;
  }

  async delete(key: string): Promise<void> {
    const response = await this.send(key, { method: "DELETE" });
    // S3 answers 204 for a key that was never there too; so does Millrace.
    if (!response.ok && response.status !== 404) await this.refused(response, key);
    await response.body?.cancel();
  }
}
