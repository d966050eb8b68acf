export {
  addMember,
  checkedRole,
  getMember,
  listMembers,
  membersOf,
  removeMember,
  roleFromFlags,
  updateMember,
  ROLES,
  type AddMemberInput,
  type MemberView,
  type UpdateMemberInput,
} from "./members.ts";
export {
  createAccount,
  deleteAccount,
  getAccount,
  listAccounts,
  updateAccount,
  userView,
  type CreateAccountInput,
  type UpdateAccountInput,
  type UserView,
} from "./users.ts";
export {
  addGroupMember,
  checkGroupAcl,
  createGroup,
  deleteGroup,
  getGroup,
  listGroups,
  removeGroupMember,
  updateGroup,
  ALL_GROUP,
  type GroupView,
} from "./groups.ts";
export {
  createFolder,
  deleteFolder,
  getFolder,
  listFolders,
  setFolderPermission,
  updateFolder,
  LEVELS,
  type CreateFolderInput,
  type FolderPermissionView,
  type FolderView,
  type UpdateFolderInput,
} from "./folders.ts";
export {
  createToken,
  deleteExpiredTokens,
  deleteToken,
  listTokens,
  type NewTokenInput,
  type TokenView,
} from "./tokens.ts";
export {
  deleteStaleRateLimits,
  hitRateLimit,
  signIn,
  RateLimitedError,
  SIGN_IN_LIMITS,
  type RateLimit,
} from "./sign-in.ts";
export { canSeeJob, folderLevel, folderLevels, readablePrefixes } from "../access.ts";
