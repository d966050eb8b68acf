// OIDC ID tokens for jobs (windmill-client's getIdToken, Windmill's `oidc/token/{audience}`): a
// job proves to a cloud provider (AWS, GCP, Vault…) which workspace, script and user it runs as,
// without a stored credential. The provider trusts the instance's issuer URL and checks the
// signature against the keys published at `<issuer>jwks`.
//
// The signing key is an ES256 (P-256) key derived from the instance key (MILLRACE_SECRET_KEY,
// never in the database) and a random salt stored in the database, as resume URLs' key is: every
// server derives the same key, nothing private is stored, and neither a database dump nor the
// instance key alone can sign. Only a job's own token gets one, with claims about that job.
import { createECDH, createPrivateKey, createPublicKey, hkdfSync, sign, type KeyObject } from "node:crypto";
import { recordAudit } from "./audit/index.ts";
import { hashToken } from "./auth/tokens.ts";
import type { CoreContext } from "./context.ts";
import { AppError, invalidInput } from "./errors.ts";
import { getInstanceSecret } from "./instance.ts";
import { deriveInstanceKey, SECRET_KEY_VAR, SecretKeyError } from "./secrets/cipher.ts";
import type { Membership } from "./membership.ts";

const SALT_SETTING = "oidc_signing_secret_salt";
const DEFAULT_EXPIRES_IN_SECS = 3600;
const MAX_EXPIRES_IN_SECS = 12 * 3600;
// P-256's group order: a derived scalar must be below it (and not zero).
const P256_ORDER = BigInt("0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551");

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicJwk: Record<string, string>;
}

const keys = new WeakMap<object, Promise<SigningKey>>();

/** The instance's OIDC signing key (cached per pool). */
function signingKey(ctx: CoreContext, rawInstanceKey: string | undefined): Promise<SigningKey> {
  if (!rawInstanceKey)
    throw new SecretKeyError(`${SECRET_KEY_VAR} is not set: OIDC tokens cannot be signed.`);
  let key = keys.get(ctx.pool);
  if (!key) {
    key = (async () => {
      const salt = await getInstanceSecret(ctx, SALT_SETTING);
      const seed = Buffer.from(
        hkdfSync("sha256", deriveInstanceKey(rawInstanceKey), salt, "millrace oidc v1", 48),
      );
      // 48 bytes reduced modulo the order: a uniform scalar (the bias is below 2^-128).
      const scalar = (BigInt(`0x${seed.toString("hex")}`) % (P256_ORDER - 1n)) + 1n;
      const d = Buffer.from(scalar.toString(16).padStart(64, "0"), "hex");
      const ecdh = createECDH("prime256v1");
      ecdh.setPrivateKey(d);
      const point = ecdh.getPublicKey();
      const x = point.subarray(1, 33).toString("base64url");
      const y = point.subarray(33, 65).toString("base64url");
      const jwk = { kty: "EC", crv: "P-256", x, y };
      const privateKey = createPrivateKey({ key: { ...jwk, d: d.toString("base64url") }, format: "jwk" });
      const kid = hashToken(`${x}.${y}`).slice(0, 16);
      return { kid, privateKey, publicJwk: { ...jwk, kid, use: "sig", alg: "ES256" } };
    })();
    key.catch(() => keys.delete(ctx.pool));
    keys.set(ctx.pool, key);
  }
  return key;
}

/** The issuer URL: `<base URL>/api/oidc/`, as Windmill names it. */
export function oidcIssuer(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/api/oidc/`;
}

/** The public keys (JWKS) a provider checks ID tokens with. */
export async function oidcJwks(
  ctx: CoreContext,
  rawInstanceKey: string | undefined,
): Promise<{ keys: Record<string, string>[] }> {
  const { publicJwk } = await signingKey(ctx, rawInstanceKey);
  return { keys: [publicJwk] };
}

/** The discovery document at `<issuer>.well-known/openid-configuration`. */
export function oidcDiscovery(baseUrl: string) {
  const issuer = oidcIssuer(baseUrl);
  return {
    issuer,
    jwks_uri: `${issuer}jwks`,
    response_types_supported: ["id_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["ES256"],
    claims_supported: [
      "sub",
      "aud",
      "exp",
      "iat",
      "nbf",
      "iss",
      "email",
      "username",
      "workspace",
      "job_id",
      "path",
      "flow_path",
    ],
  };
}

/**
 * An ID token for the job whose token made the call: `aud` as asked, `sub`
 * `<email>::<script path>::<flow path>::<workspace>` (what providers' trust conditions match).
 */
export async function issueJobIdToken(
  ctx: CoreContext,
  membership: Membership,
  input: {
    rawInstanceKey: string | undefined;
    baseUrl: string;
    callerToken: string | null;
    audience: string;
    expiresInSecs?: number;
  },
): Promise<string> {
  const { principal } = membership;
  if (principal.tokenKind !== "job" || !input.callerToken)
    throw new AppError("FORBIDDEN", "an OIDC token is issued to a job, with its own token (WM_TOKEN)");
  if (!input.audience || input.audience.length > 500)
    throw invalidInput("audience", "must be 1 to 500 characters");
  const expiresIn = input.expiresInSecs ?? DEFAULT_EXPIRES_IN_SECS;
  if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > MAX_EXPIRES_IN_SECS)
    throw invalidInput("expires_in", `must be from 1 to ${MAX_EXPIRES_IN_SECS} seconds`);
  // The job the token was issued with (its label, see secrets/job-token.ts), of this workspace.
  const { rows } = await ctx.pool.query<{ id: string; script_path: string | null; root_path: string | null }>(
    `SELECT j.id, j.script_path, r.script_path AS root_path
       FROM api_token t
       JOIN job j ON t.label = 'job ' || j.id::text AND j.workspace_id = t.workspace_id
       LEFT JOIN job r ON r.id = j.root_job_id AND r.kind IN ('flow', 'flowpreview')
      WHERE t.token_hash = $1 AND t.kind = 'job' AND t.workspace_id = $2`,
    [hashToken(input.callerToken), membership.workspace.id],
  );
  const job = rows[0];
  if (!job) throw new AppError("FORBIDDEN", "an OIDC token is issued to a running job of this workspace");
  const key = await signingKey(ctx, input.rawInstanceKey);
  const now = Math.floor(Date.now() / 1000);
  const path = job.script_path ?? "";
  const flowPath = job.root_path ?? "";
  const workspace = membership.workspace.id;
  const claims = {
    iss: oidcIssuer(input.baseUrl),
    aud: input.audience,
    sub: `${principal.email}::${path}::${flowPath}::${workspace}`,
    iat: now,
    nbf: now,
    exp: now + expiresIn,
    email: principal.email,
    username: principal.username,
    workspace,
    job_id: job.id,
    path,
    flow_path: flowPath,
  };
  const header = { alg: "ES256", typ: "JWT", kid: key.kid };
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const signingInput = `${encode(header)}.${encode(claims)}`;
  // JWS wants the raw r||s form, not DER.
  const signature = sign("sha256", Buffer.from(signingInput), {
    key: key.privateKey,
    dsaEncoding: "ieee-p1363",
  });
  await recordAudit(ctx.pool, principal, {
    workspaceId: workspace,
    operation: "oidc.token",
    resource: job.id,
    parameters: { audience: input.audience },
  });
  return `${signingInput}.${signature.toString("base64url")}`;
}

/** The public key of a JWK from `oidcJwks` (for verifying a token). */
export function oidcPublicKey(jwk: Record<string, string>): KeyObject {
  return createPublicKey({ key: jwk, format: "jwk" });
}
