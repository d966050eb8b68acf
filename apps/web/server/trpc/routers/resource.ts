import { z } from "zod";
import {
  createResource,
  createResourceType,
  deleteResource,
  deleteResourceType,
  getResource,
  listResources,
  listResourceTypes,
  updateResource,
  type ResourceView,
} from "@millrace/core";
import { router, workspaceProcedure } from "../init.ts";

function resourceView(resource: Omit<ResourceView, "value"> & { value?: unknown }) {
  return {
    path: resource.path,
    resourceType: resource.resourceType,
    description: resource.description,
    value: resource.value,
    createdBy: resource.createdBy,
    updatedAt: resource.updatedAt.toISOString(),
  };
}

const path = z.object({ path: z.string() });

export const resourceRouter = router({
  list: workspaceProcedure.query(async ({ ctx }) =>
    (await listResources(ctx.services, ctx.membership, { perPage: 1000 })).map(resourceView),
  ),
  /** The stored value: `$var:` references unresolved, so no secret leaves the server. */
  get: workspaceProcedure
    .input(path)
    .query(async ({ ctx, input }) =>
      resourceView(await getResource(ctx.services, ctx.membership, input.path)),
    ),
  create: workspaceProcedure
    .input(
      z.object({
        path: z.string(),
        resourceType: z.string(),
        value: z.unknown(),
        description: z.string().default(""),
      }),
    )
    .mutation(async ({ ctx, input }) =>
      resourceView(await createResource(ctx.services, ctx.membership, input)),
    ),
  update: workspaceProcedure
    .input(
      z.object({
        path: z.string(),
        newPath: z.string().optional(),
        value: z.unknown(),
        description: z.string().optional(),
      }),
    )
    .mutation(async ({ ctx, input }) =>
      resourceView(
        await updateResource(ctx.services, ctx.membership, input.path, {
          path: input.newPath,
          value: input.value,
          description: input.description,
        }),
      ),
    ),
  delete: workspaceProcedure.input(path).mutation(async ({ ctx, input }) => {
    await deleteResource(ctx.services, ctx.membership, input.path);
    return { ok: true };
  }),
  types: workspaceProcedure.query(async ({ ctx }) =>
    (await listResourceTypes(ctx.services, ctx.membership)).map((type) => ({
      name: type.name,
      description: type.description,
      schema: type.schema,
      builtin: type.builtin,
    })),
  ),
  createType: workspaceProcedure
    .input(z.object({ name: z.string(), schema: z.unknown(), description: z.string().default("") }))
    .mutation(async ({ ctx, input }) => {
      const type = await createResourceType(ctx.services, ctx.membership, input);
      return { name: type.name };
    }),
  deleteType: workspaceProcedure.input(z.object({ name: z.string() })).mutation(async ({ ctx, input }) => {
    await deleteResourceType(ctx.services, ctx.membership, input.name);
    return { ok: true };
  }),
});
