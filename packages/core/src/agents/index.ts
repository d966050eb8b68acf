export {
  AGENT_TOKEN_PREFIX,
  agentFromToken,
  agentNamePrefix,
  createAgentToken,
  listAgentTokens,
  revokeAgentToken,
  type AgentIdentity,
  type AgentTokenSummary,
  type CreateAgentTokenInput,
} from "./tokens.ts";
export {
  agentAppendLogs,
  agentClaim,
  agentComplete,
  agentLeave,
  agentPing,
  MAX_AGENT_SLOTS,
  type AgentCompletion,
  type AgentJob,
  type AgentPing,
} from "./work.ts";
