"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { useTRPC } from "@/lib/trpc";

const REFRESH_MS = 10_000;

/** The instance's open alerts (fleet/alerts.ts), for superadmins: nothing for anyone else. */
export function AlertsBanner({ isSuperAdmin }: { isSuperAdmin: boolean }) {
  const trpc = useTRPC();
  const alerts = useQuery({
    ...trpc.fleet.alerts.queryOptions(),
    enabled: isSuperAdmin,
    refetchInterval: REFRESH_MS,
    retry: false,
  });
  const open = alerts.data?.open ?? [];
  if (!isSuperAdmin || open.length === 0) return null;
  return (
    <div
      role="alert"
      data-testid="alerts-banner"
      className="stack rounded-md border border-bad-line bg-bad-bg p-3"
    >
      <strong className="text-bad">
        {open.length === 1 ? "1 open alert" : `${open.length} open alerts`}
      </strong>
      <ul className="m-0 pl-5">
        {open.map((alert) => (
          <li key={alert.id}>
            {alert.message} <span className="muted">(since {new Date(alert.raisedAt).toLocaleString()})</span>
          </li>
        ))}
      </ul>
      <span className="muted">
        Where alerts are sent: <Link href="/admin/alerts">Alerts settings</Link>
      </span>
    </div>
  );
}
