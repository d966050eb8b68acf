"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { use } from "react";
import { StatusBadge } from "@/components/job-view";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

export default function RunsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const jobs = useQuery({ ...trpc.job.list.queryOptions({ workspace }), refetchInterval: 2000 });
  return (
    <div>
      <h1>Runs</h1>
      {jobs.error && <div className="error">{errorMessage(jobs.error)}</div>}
      {jobs.data && jobs.data.length === 0 && <div className="panel empty">No runs yet.</div>}
      {jobs.data && jobs.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Status</th>
              <th>Script</th>
              <th>Created</th>
              <th>By</th>
              <th>Tag</th>
            </tr>
          </thead>
          <tbody>
            {jobs.data.map((job) => (
              <tr key={job.id}>
                <td>
                  <Link href={`/w/${workspace}/runs/${job.id}`}>
                    <StatusBadge status={job.status} />
                  </Link>
                </td>
                <td>{job.scriptPath ?? <span className="muted">preview</span>}</td>
                <td>
                  <Link href={`/w/${workspace}/runs/${job.id}`}>
                    {new Date(job.createdAt).toLocaleString()}
                  </Link>
                </td>
                <td>{job.createdBy}</td>
                <td>
                  <code>{job.tag}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
