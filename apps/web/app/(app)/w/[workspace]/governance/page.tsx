"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { use } from "react";
import { GovernanceReport } from "@/components/people/governance-report";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

export default function WorkspaceGovernancePage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const me = useQuery(trpc.me.queryOptions());
  const report = useQuery({ ...trpc.governance.workspace.queryOptions({ workspace }), retry: false });
  return (
    <div>
      <h1>Governance</h1>
      {me.data?.isSuperAdmin && (
        <p>
          <Link href="/admin/governance">See every workspace of the instance</Link>
        </p>
      )}
      {report.error && <div className="error">{errorMessage(report.error)}</div>}
      {report.data && (
        <GovernanceReport report={report.data} apiPath={`/api/w/${workspace}/governance/report`} />
      )}
    </div>
  );
}
