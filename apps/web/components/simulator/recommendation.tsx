"use client";
import { PEAK_HEADROOM, recommendWorkers } from "@millrace/core/fleet-model";
import { fieldNumber } from "./simulator-input";

const figure = (value: number) => fieldNumber(value);

/**
 * Seed 004's starting values for autoscaling, with the figures that produce them. The table's
 * wording is quoted; how it is computed (load as rate × duration) is explained in
 * packages/core/src/fleet/sizing.ts and said here.
 */
export function Recommendation({
  baseRate,
  peakRate,
  meanDurationSecs,
  onBaseRate,
  onPeakRate,
}: {
  baseRate: string;
  peakRate: string;
  meanDurationSecs: number;
  onBaseRate: (value: string) => void;
  onPeakRate: (value: string) => void;
}) {
  const base = Number(baseRate);
  const peak = Number(peakRate);
  const valid = Number.isFinite(base) && Number.isFinite(peak) && base >= 0 && peak >= 0;
  const advice = valid
    ? recommendWorkers({ baseRatePerSec: base, peakRatePerSec: peak, meanDurationSecs })
    : null;
  return (
    <section aria-labelledby="recommendation-heading" className="panel stack">
      <h2 id="recommendation-heading" style={{ margin: 0 }}>
        Recommended autoscaling
      </h2>
      <div className="row">
        <label>
          Expected base load (jobs/s)
          <input
            type="number"
            step="any"
            min="0"
            name="baseRate"
            value={baseRate}
            onChange={(e) => onBaseRate(e.target.value)}
          />
        </label>
        <label>
          Peak load (jobs/s)
          <input
            type="number"
            step="any"
            min="0"
            name="peakRate"
            value={peakRate}
            onChange={(e) => onPeakRate(e.target.value)}
          />
        </label>
        <div>
          <span className="muted text-sm">Mean job duration</span>
          <div>{figure(meanDurationSecs)} s</div>
        </div>
      </div>
      {advice ? (
        <dl className="m-0 stack">
          <div>
            <dt>
              <strong>Min workers</strong> <span className="muted">= expected base load / job duration</span>
            </dt>
            <dd className="m-0" data-testid="recommend-min">
              {figure(base)} jobs/s × {figure(meanDurationSecs)} s = {figure(advice.baseWorkers)} →{" "}
              <strong>{advice.min}</strong> worker{advice.min === 1 ? "" : "s"}
            </dd>
          </div>
          <div>
            <dt>
              <strong>Max workers</strong>{" "}
              <span className="muted">= peak load / job duration × {PEAK_HEADROOM}</span>
            </dt>
            <dd className="m-0" data-testid="recommend-max">
              {figure(Math.max(base, peak))} jobs/s × {figure(meanDurationSecs)} s × {PEAK_HEADROOM} ={" "}
              {figure(advice.peakWorkersWithHeadroom)} → <strong>{advice.max}</strong> worker
              {advice.max === 1 ? "" : "s"}
            </dd>
          </div>
        </dl>
      ) : (
        <div className="field-error">Enter the base and peak load as jobs per second.</div>
      )}
      <p className="muted text-sm m-0">
        The formulas are seed 004&rsquo;s (&ldquo;Scaling workers&rdquo;). Load there is the work arriving, so
        a rate in jobs per second is multiplied by the mean duration: the workers it keeps busy, the
        seed&rsquo;s &ldquo;required workers ≥ job arrival rate × average job duration&rdquo;. Figures are
        rounded up. The seed also suggests scaling out at 75 % occupancy and in below 25 % for 5 minutes.
      </p>
    </section>
  );
}
