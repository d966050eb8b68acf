import { deleteFile, downloadFile, s3ResourceInfo, uploadFile } from "@millrace/core";
import { z } from "zod";
import { boundedBody, json } from "../../http.ts";
import { serverEnv } from "../../env.ts";
import { defineRoute } from "../define.ts";
import type { Route } from "../router.ts";
import { callMeta } from "./params.ts";

// Windmill's job helpers for a workspace's object storage (writeS3File, loadS3File,
// deleteS3File, denoS3LightClientSettings): see packages/core/src/object-storage.

/** Which store: an s3 resource by path, or the workspace's storage (a secondary one by name). */
const storageQuery = {
  s3_resource_path: z.string().optional(),
  storage: z.string().optional(),
  resource_type: z.string().optional(),
};

const target = (query: { s3_resource_path?: string; storage?: string; resource_type?: string }) => ({
  s3ResourcePath: query.s3_resource_path,
  storage: query.storage,
  resourceType: query.resource_type,
});

export const objectStorageRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/job_helpers/v2/s3_resource_info",
    summary: "s3ResourceInfo",
    tag: "object storage",
    body: z.object({ s3_resource_path: z.string().nullish(), storage: z.string().nullish() }),
    response: z.object({
      bucket: z.string(),
      region: z.string(),
      endPoint: z.string(),
      useSSL: z.boolean(),
      pathStyle: z.boolean(),
      accessKey: z.string().optional(),
      secretKey: z.string().optional(),
    }),
    handler: async (ctx, { body }) =>
      json(
        await s3ResourceInfo(
          ctx.services,
          await ctx.membership(),
          { s3ResourcePath: body.s3_resource_path ?? undefined, storage: body.storage ?? undefined },
          callMeta(ctx),
        ),
      ),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/job_helpers/upload_s3_file",
    summary: "fileUpload",
    tag: "object storage",
    query: z.object({
      ...storageQuery,
      file_key: z.string().optional(),
      file_extension: z.string().optional(),
      content_type: z.string().optional(),
      content_disposition: z.string().optional(),
    }),
    // The body is the file itself (application/octet-stream), streamed to the store.
    response: z.object({ file_key: z.string() }),
    handler: async (ctx, { query }) => {
      const membership = await ctx.membership();
      const { body, length } = await boundedBody(
        ctx.request,
        serverEnv().OBJECT_STORAGE_UPLOAD_LIMIT_MB * 1024 * 1024,
      );
      return json(
        await uploadFile(
          ctx.services,
          membership,
          target(query),
          {
            fileKey: query.file_key,
            fileExtension: query.file_extension,
            contentType: query.content_type,
            contentDisposition: query.content_disposition,
          },
          body,
          length,
          callMeta(ctx),
        ),
      );
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/job_helpers/download_s3_file",
    summary: "fileDownload",
    tag: "object storage",
    query: z.object({ ...storageQuery, file_key: z.string({ error: "is required" }) }),
    response: { contentType: "application/octet-stream", description: "The file's bytes" },
    handler: async (ctx, { query }) => {
      const file = await downloadFile(
        ctx.services,
        await ctx.membership(),
        target(query),
        query.file_key,
        callMeta(ctx),
      );
      return new Response(file.body, {
        headers: {
          "content-type": file.contentType,
          ...(file.contentLength ? { "content-length": file.contentLength } : {}),
          // Whatever a member uploaded (HTML included) is never rendered as a page of this origin.
          "content-disposition": "attachment",
          "x-content-type-options": "nosniff",
          "content-security-policy": "sandbox",
        },
      });
    },
  }),

  defineRoute({
    method: "DELETE",
    pattern: "/api/w/:workspace/job_helpers/delete_s3_file",
    summary: "deleteS3File",
    tag: "object storage",
    query: z.object({ ...storageQuery, file_key: z.string({ error: "is required" }) }),
    response: z.object({}),
    handler: async (ctx, { query }) => {
      await deleteFile(ctx.services, await ctx.membership(), target(query), query.file_key, callMeta(ctx));
      return json({});
    },
  }),
];
