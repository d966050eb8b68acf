export {
  listVariables,
  getVariable,
  getVariableValue,
  variableExists,
  checkVariableFileFields,
  createVariable,
  updateVariable,
  deleteVariable,
  MAX_VARIABLE_VALUE_CHARS,
  type VariableView,
  type CallMeta,
  type ListVariablesInput,
  type GetVariableOptions,
  type CreateVariableInput,
  type UpdateVariableInput,
  type WriteOptions,
} from "./variables.ts";
export {
  JOB_SECRET_READ_CHANNEL,
  notifyJobSecretRead,
  parseJobSecretRead,
  type JobSecretRead,
} from "./secret-reads.ts";
