"use client";
import type { ReactNode } from "react";
import type { SimulatorForm } from "./simulator-input";

type Key = keyof SimulatorForm;

function NumberField({
  form,
  name,
  label,
  invalid,
  onChange,
  hint,
}: {
  form: SimulatorForm;
  name: Key;
  label: string;
  invalid: boolean;
  onChange: (name: Key, value: string) => void;
  hint?: ReactNode;
}) {
  return (
    <label>
      {label}
      <input
        name={name}
        type="number"
        inputMode="decimal"
        step="any"
        min="0"
        value={form[name]}
        aria-invalid={invalid}
        onChange={(e) => onChange(name, e.target.value)}
      />
      {hint && <span className="muted text-sm">{hint}</span>}
    </label>
  );
}

function Fieldset({ legend, children }: { legend: string; children: ReactNode }) {
  return (
    <fieldset className="m-0 stack min-w-0 rounded-md border border-line p-3">
      <legend className="px-1 font-medium">{legend}</legend>
      {children}
    </fieldset>
  );
}

/**
 * The simulator's inputs: arrivals, job duration, workers. `invalidField` is the model's name of
 * the field it refused (`arrivalRate`, `duration.secs`, `workers.max` …).
 */
export function SimulatorFields({
  form,
  onChange,
  invalidField,
}: {
  form: SimulatorForm;
  onChange: (name: Key, value: string) => void;
  invalidField?: string;
}) {
  const field = (name: Key, label: string, modelName: string = name, hint?: ReactNode) => (
    <NumberField
      form={form}
      name={name}
      label={label}
      invalid={invalidField === modelName}
      onChange={onChange}
      hint={hint}
    />
  );
  const select = (name: Key, label: string, options: [string, string][]) => (
    <label>
      {label}
      <select name={name} value={form[name]} onChange={(e) => onChange(name, e.target.value)}>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <div className="grid gap-3 lg:grid-cols-3">
      <Fieldset legend="Arrivals">
        {select("mode", "Mode", [
          ["batch", "Batch: every job at once"],
          ["continuous", "Continuous: a steady rate"],
          ["random", "Random: Poisson arrivals"],
        ])}
        {form.mode === "batch" ? (
          field("jobs", "Jobs")
        ) : (
          <>
            {field("arrivalRate", "Arrival rate (jobs/s)")}
            {field("arrivalSecs", "Arrivals for (s)")}
          </>
        )}
        {form.mode === "random" && field("seed", "Seed", "seed", "The same seed gives the same run.")}
      </Fieldset>
      <Fieldset legend="Job duration">
        {select("durationKind", "Distribution", [
          ["fixed", "Fixed"],
          ["exponential", "Exponential"],
          ["uniform", "Uniform range"],
        ])}
        {form.durationKind === "fixed" && field("durationSecs", "Duration (s)", "duration.secs")}
        {form.durationKind === "exponential" &&
          field("durationSecs", "Mean duration (s)", "duration.meanSecs")}
        {form.durationKind === "uniform" && (
          <>
            {field("minSecs", "Shortest (s)", "duration.minSecs")}
            {field("maxSecs", "Longest (s)", "duration.maxSecs")}
          </>
        )}
        {form.mode !== "random" && form.durationKind !== "fixed" && field("seed", "Seed")}
      </Fieldset>
      <Fieldset legend="Workers">
        {select("scaling", "Worker count", [
          ["fixed", "Fixed"],
          ["autoscale", "Autoscaling"],
        ])}
        {form.scaling === "fixed" ? (
          field("workers", "Workers", "workers.count")
        ) : (
          <>
            <div className="row">
              {field("min", "Min workers", "workers.min")}
              {field("max", "Max workers", "workers.max")}
            </div>
            <details>
              <summary>Autoscaling rule</summary>
              <p className="muted text-sm">
                Starts with the minimum. Every check, unless the last scaling is more recent than the
                cooldown: when jobs have waited without a break for the scale-out delay, add one worker per
                waiting job up to the maximum; otherwise remove the workers idle for the scale-in delay, down
                to the minimum. New workers start at once.
              </p>
              {field("checkEverySecs", "Check every (s)", "workers.checkEverySecs")}
              {field("scaleOutAfterSecs", "Scale out after jobs wait for (s)", "workers.scaleOutAfterSecs")}
              {field("scaleInIdleSecs", "Scale in workers idle for (s)", "workers.scaleInIdleSecs")}
              {field("cooldownSecs", "Cooldown (s)", "workers.cooldownSecs")}
            </details>
          </>
        )}
      </Fieldset>
    </div>
  );
}
