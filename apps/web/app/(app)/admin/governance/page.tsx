"use client";
import { useQuery } from "@tanstack/react-query";
import { GovernanceReport } from "@/components/people/governance-report";
import { PlainPage } from "@/components/people/plain-page";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

export default function InstanceGovernancePage() {
  const trpc = useTRPC();
  const report = useQuery({ ...trpc.governance.instance.queryOptions(), retry: false });
  return (
    <PlainPage title="Instance governance">
      {report.error && <div className="error">{errorMessage(report.error)}</div>}
      {report.data && <GovernanceReport report={report.data} apiPath="/api/governance/report" />}
    </PlainPage>
  );
}
