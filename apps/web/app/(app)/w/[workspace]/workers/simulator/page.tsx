"use client";
import { useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { use, useMemo, useState, type FormEvent } from "react";
import { meanDuration, simulate } from "@millrace/core/fleet-model";
import { Recommendation } from "@/components/simulator/recommendation";
import { SimulatorFields } from "@/components/simulator/simulator-fields";
import {
  DEFAULT_FORM,
  fieldNumber,
  toSimulationInput,
  type SimulatorForm,
} from "@/components/simulator/simulator-input";
import { Button } from "@/components/ui/button";
import Link from "@/components/ui/link";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

// recharts is large: the form shows at once, the charts follow.
const SimulatorResults = dynamic(
  () => import("@/components/simulator/simulator-results").then((module) => module.SimulatorResults),
  { ssr: false, loading: () => <div className="panel m-0 h-[420px]" aria-hidden /> },
);

const ALL_TAGS = "";

/** "Use my data": the last day's jobs of `tag` (or of all tags) as the simulator's arrivals. */
function UseMyData({
  onUse,
}: {
  onUse: (load: { rate: number; peak: number; duration: number; hours: number }) => void;
}) {
  const trpc = useTRPC();
  const profile = useQuery(trpc.fleet.loadProfile.queryOptions());
  const [tag, setTag] = useState(ALL_TAGS);
  const chosen = profile.data?.tags.find((t) => (t.tag ?? ALL_TAGS) === tag);
  return (
    <div className="panel stack">
      <div className="row items-end">
        <label>
          Tag
          <select name="tag" value={tag} onChange={(e) => setTag(e.target.value)} disabled={!profile.data}>
            {(profile.data?.tags ?? [{ tag: null }]).map((t) => (
              <option key={t.tag ?? ALL_TAGS} value={t.tag ?? ALL_TAGS}>
                {t.tag ?? "All tags"}
              </option>
            ))}
          </select>
        </label>
        <Button
          disabled={!chosen || chosen.jobs === 0}
          onClick={() =>
            chosen &&
            onUse({
              rate: chosen.arrivalRatePerSec,
              peak: chosen.peakRatePerSec,
              duration: chosen.meanDurationSecs,
              hours: profile.data!.hours,
            })
          }
        >
          Use my data
        </Button>
      </div>
      {profile.error && <div className="error">{errorMessage(profile.error)}</div>}
      {profile.data && (
        <p className="muted text-sm m-0" data-testid="my-data">
          {chosen && chosen.jobs > 0
            ? `Last ${profile.data.hours} h: ${chosen.jobs.toLocaleString()} jobs (${fieldNumber(chosen.arrivalRatePerSec)} jobs/s on average, ${fieldNumber(chosen.peakRatePerSec)} jobs/s in the busiest minute), ${fieldNumber(chosen.meanDurationSecs)} s each on average, waiting ${fieldNumber(chosen.meanWaitSecs)} s.`
            : `No job ran on this instance in the last ${profile.data.hours} h.`}
        </p>
      )}
    </div>
  );
}

export default function SimulatorPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const [form, setForm] = useState<SimulatorForm>(DEFAULT_FORM);
  // The simulation runs on submit, not on each keystroke: a million jobs take a moment.
  const [submitted, setSubmitted] = useState<SimulatorForm>(DEFAULT_FORM);
  const [baseRate, setBaseRate] = useState(DEFAULT_FORM.arrivalRate);
  const [peakRate, setPeakRate] = useState(DEFAULT_FORM.arrivalRate);

  const outcome = useMemo(() => {
    try {
      return { result: simulate(toSimulationInput(submitted)) };
    } catch (error) {
      return { error, field: (error as { field?: string }).field };
    }
  }, [submitted]);
  const typedDuration = toSimulationInput(form).duration;
  const meanSecs = meanDuration(typedDuration);

  const change = (name: keyof SimulatorForm, value: string) =>
    setForm((current) => ({ ...current, [name]: value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(form);
  };
  const applyMyData = (load: { rate: number; peak: number; duration: number; hours: number }) => {
    const mean = fieldNumber(load.duration);
    // The day replayed as Poisson arrivals at its mean rate; the chosen distribution keeps its
    // shape around the observed mean duration.
    const next: SimulatorForm = {
      ...form,
      mode: "random",
      arrivalRate: fieldNumber(load.rate),
      arrivalSecs: String(load.hours * 3600),
      durationSecs: mean,
      minSecs: fieldNumber(load.duration / 2),
      maxSecs: fieldNumber(load.duration * 1.5),
    };
    setForm(next);
    setSubmitted(next);
    setBaseRate(fieldNumber(load.rate));
    setPeakRate(fieldNumber(load.peak));
  };

  return (
    <div className="stack">
      <div className="toolbar">
        <h1 style={{ margin: 0 }}>Sizing simulator</h1>
        <Link href={`/w/${workspace}/workers`}>Back to workers</Link>
      </div>
      <p className="muted m-0">
        Workers take jobs from one queue in arrival order and run one at a time. Pick how jobs arrive, how
        long they run and how many workers serve them: the simulation shows the queue, the waits and the
        workers&rsquo; occupancy over time. Runs are deterministic: the same figures and seed give the same
        run.
      </p>
      <UseMyData onUse={applyMyData} />
      <form className="stack" onSubmit={submit} aria-label="Simulation">
        <SimulatorFields form={form} onChange={change} invalidField={outcome.field} />
        <div className="row">
          <Button type="submit" variant="primary">
            Simulate
          </Button>
        </div>
      </form>
      {outcome.error ? (
        <div className="error" role="alert">
          {errorMessage(outcome.error)}
        </div>
      ) : (
        outcome.result && (
          <SimulatorResults result={outcome.result} autoscaled={submitted.scaling === "autoscale"} />
        )
      )}
      <Recommendation
        baseRate={baseRate}
        peakRate={peakRate}
        meanDurationSecs={Number.isFinite(meanSecs) ? meanSecs : 0}
        onBaseRate={setBaseRate}
        onPeakRate={setPeakRate}
      />
    </div>
  );
}
