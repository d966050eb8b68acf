export { BUILTIN_RESOURCE_TYPES, type BuiltinResourceType } from "./builtin-types.ts";
export {
  listResourceTypes,
  getResourceType,
  resourceTypeExists,
  createResourceType,
  updateResourceType,
  deleteResourceType,
  RESOURCE_TYPE_NAME,
  type ResourceTypeView,
  type ResourceTypeInput,
} from "./resource-types.ts";
export {
  listResources,
  getResource,
  resourceExists,
  getResourceValueInterpolated,
  resolveReference,
  createResource,
  updateResource,
  deleteResource,
  type ResourceView,
  type ListResourcesInput,
  type CreateResourceInput,
  type UpdateResourceInput,
} from "./resources.ts";
export { checkResourceValue, parseReference } from "./value-schema.ts";
export { jobMembership, resolveJobArgs } from "./job-args.ts";
