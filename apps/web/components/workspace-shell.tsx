"use client";
import { useQuery } from "@tanstack/react-query";
import { signOut } from "next-auth/react";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import type { ReactNode } from "react";
import { useTRPC } from "@/lib/trpc";

export function WorkspaceShell({ workspace, children }: { workspace: string; children: ReactNode }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const workspaces = useQuery(trpc.workspace.list.queryOptions());
  const me = useQuery(trpc.me.queryOptions());
  const links = [
    { href: `/w/${workspace}/scripts`, label: "Scripts" },
    { href: `/w/${workspace}/runs`, label: "Runs" },
    { href: `/w/${workspace}/schedules`, label: "Schedules" },
    { href: `/w/${workspace}/variables`, label: "Variables" },
    { href: `/w/${workspace}/resources`, label: "Resources" },
    { href: `/w/${workspace}/members`, label: "Members" },
    { href: `/w/${workspace}/folders`, label: "Folders & groups" },
    { href: `/w/${workspace}/audit`, label: "Audit log" },
    { href: `/w/${workspace}/governance`, label: "Governance" },
    { href: `/w/${workspace}/workers`, label: "Workers" },
    { href: `/w/${workspace}/git-sync`, label: "Git sync" },
  ];
  return (
    <div className="shell">
      <nav className="sidebar" aria-label="Main">
        <div className="brand">Millrace</div>
        <select
          aria-label="Workspace"
          value={workspace}
          onChange={(event) => router.push(`/w/${event.target.value}/scripts`)}
        >
          {(workspaces.data ?? [{ id: workspace, name: workspace }]).map((w) => (
            <option key={w.id} value={w.id}>
              {w.name} ({w.id})
            </option>
          ))}
        </select>
        {links.map((link) => (
          <Link key={link.href} href={link.href} className={pathname.startsWith(link.href) ? "active" : ""}>
            {link.label}
          </Link>
        ))}
        <Link href="/workspaces">All workspaces</Link>
        <Link href="/account/tokens">API tokens</Link>
        {me.data?.isSuperAdmin && <Link href="/admin/governance">Instance governance</Link>}
        {me.data?.isSuperAdmin && <Link href="/admin/users">Users</Link>}
        {me.data?.isSuperAdmin && <Link href="/admin/restore">Restore</Link>}
        <div className="spacer" />
        <div className="who">{me.data?.email}</div>
        <a href="#" onClick={() => void signOut({ callbackUrl: "/login" })}>
          Sign out
        </a>
      </nav>
      <main className="main">{children}</main>
    </div>
  );
}
