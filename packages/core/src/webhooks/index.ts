export { webhookArgs } from "./body.ts";
export { assertCallAllowed, scopePathOf, webhookScope, WEBHOOK_SCOPE_PREFIX } from "./scope.ts";
export {
  createWebhookToken,
  listWebhookTokens,
  revokeWebhookToken,
  type NewWebhookTokenInput,
  type WebhookTokenView,
} from "./tokens.ts";
