import { DEFAULT_AUTOSCALE, type SimulationInput } from "@millrace/core/fleet-model";

/** The simulator's form as typed (strings, so that a half-typed number is kept as is). */
export interface SimulatorForm {
  mode: SimulationInput["mode"];
  jobs: string;
  arrivalRate: string;
  arrivalSecs: string;
  durationKind: SimulationInput["duration"]["kind"];
  durationSecs: string;
  minSecs: string;
  maxSecs: string;
  scaling: SimulationInput["workers"]["kind"];
  workers: string;
  min: string;
  max: string;
  checkEverySecs: string;
  scaleOutAfterSecs: string;
  scaleInIdleSecs: string;
  cooldownSecs: string;
  seed: string;
}

export const DEFAULT_FORM: SimulatorForm = {
  mode: "batch",
  jobs: "100",
  arrivalRate: "5",
  arrivalSecs: "600",
  durationKind: "fixed",
  durationSecs: "1",
  minSecs: "0.5",
  maxSecs: "1.5",
  scaling: "fixed",
  workers: "10",
  min: "2",
  max: "10",
  checkEverySecs: String(DEFAULT_AUTOSCALE.checkEverySecs),
  scaleOutAfterSecs: String(DEFAULT_AUTOSCALE.scaleOutAfterSecs),
  scaleInIdleSecs: String(DEFAULT_AUTOSCALE.scaleInIdleSecs),
  cooldownSecs: String(DEFAULT_AUTOSCALE.cooldownSecs),
  seed: "1",
};

// An empty field becomes NaN, which the model refuses naming the field.
const num = (value: string) => (value.trim() === "" ? NaN : Number(value));

/** The model's input; the model itself checks it (and names the field at fault). */
export function toSimulationInput(form: SimulatorForm): SimulationInput {
  const duration: SimulationInput["duration"] =
    form.durationKind === "fixed"
      ? { kind: "fixed", secs: num(form.durationSecs) }
      : form.durationKind === "exponential"
        ? { kind: "exponential", meanSecs: num(form.durationSecs) }
        : { kind: "uniform", minSecs: num(form.minSecs), maxSecs: num(form.maxSecs) };
  const workers: SimulationInput["workers"] =
    form.scaling === "fixed"
      ? { kind: "fixed", count: num(form.workers) }
      : {
          kind: "autoscale",
          min: num(form.min),
          max: num(form.max),
          checkEverySecs: num(form.checkEverySecs),
          scaleOutAfterSecs: num(form.scaleOutAfterSecs),
          scaleInIdleSecs: num(form.scaleInIdleSecs),
          cooldownSecs: num(form.cooldownSecs),
        };
  return {
    mode: form.mode,
    jobs: form.mode === "batch" ? num(form.jobs) : undefined,
    arrivalRate: form.mode === "batch" ? undefined : num(form.arrivalRate),
    arrivalSecs: form.mode === "batch" ? undefined : num(form.arrivalSecs),
    duration,
    workers,
    seed: num(form.seed),
  };
}

/** A figure for a form field: a few significant digits, no exponent for everyday values. */
export function fieldNumber(value: number): string {
  if (value === 0) return "0";
  return String(Number(value.toPrecision(value >= 1 ? 4 : 3)));
}
