export {
  isWarmLanguage,
  WarmProcess,
  type WarmJob,
  type WarmLanguage,
  type WarmOutcome,
  type WarmProcessOptions,
} from "./warm-process.ts";
