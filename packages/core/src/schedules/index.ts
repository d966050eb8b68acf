export { checkTimezone, parseCron, previewTicks, CRON_FIELDS, MAX_PREVIEW_TICKS } from "./cron.ts";
export {
  createSchedule,
  updateSchedule,
  setScheduleEnabled,
  deleteSchedule,
  getSchedule,
  scheduleExists,
  listSchedules,
  SCHEDULE_CHANGED_CHANNEL,
  MAX_SCHEDULES_PER_PAGE,
  type ScheduleView,
  type ScheduleInput,
  type ScheduleUpdate,
  type ListSchedulesInput,
} from "./schedules.ts";
export { listScheduleRuns, MAX_SCHEDULE_RUNS, type ScheduleRun } from "./runs.ts";
export { runDueSchedules, msUntilNextTick, MISSED_TICK_GRACE_MS, type TickOutcome } from "./tick.ts";
export { startScheduleTicker, type ScheduleTicker, type ScheduleTickerOptions } from "./ticker.ts";
