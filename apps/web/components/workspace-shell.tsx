"use client";
import { useQuery } from "@tanstack/react-query";
import { signOut } from "next-auth/react";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import type { ReactNode } from "react";
import { ThemeToggle } from "@/components/theme-toggle";
import { useTRPC } from "@/lib/trpc";

const ADMINS_WORKSPACE = "admins";

export function WorkspaceShell({ workspace, children }: { workspace: string; children: ReactNode }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  // Re-read on mount: a workspace created elsewhere since the list was cached is not "unknown".
  const workspaces = useQuery({ ...trpc.workspace.list.queryOptions(), refetchOnMount: "always" });
  const me = useQuery(trpc.me.queryOptions());
  // The list holds every workspace the user can open (all of them for a superadmin). Until it has
  // loaded, the page is shown as usual; once it has, an id that is not in it is not pretended to be
  // another workspace. "admins" is left out of a member's list but can still be opened.
  const unknown =
    !!workspaces.data &&
    !workspaces.isFetching &&
    workspace !== ADMINS_WORKSPACE &&
    !workspaces.data.some((w) => w.id === workspace);
  const links = [
    { href: `/w/${workspace}`, label: "Home", exact: true },
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
        <div className="brand">
          <img src="/icon.svg" alt="" width={24} height={24} />
          Millrace
        </div>
        <select
          aria-label="Workspace"
          value={unknown ? "" : workspace}
          onChange={(event) => {
            if (event.target.value) router.push(`/w/${event.target.value}/scripts`);
          }}
        >
          {unknown && (
            <option value="" disabled>
              Choose a workspace
            </option>
          )}
          {(workspaces.data ?? [{ id: workspace, name: workspace }]).map((w) => (
            <option key={w.id} value={w.id}>
              {w.name} ({w.id})
            </option>
          ))}
        </select>
        {links.map((link) => (
          <Link
            key={link.href}
            href={link.href}
            className={(link.exact ? pathname === link.href : pathname.startsWith(link.href)) ? "active" : ""}
          >
            {link.label}
          </Link>
        ))}
        <Link href="/workspaces">All workspaces</Link>
        <Link href="/account/tokens">API tokens</Link>
        {me.data?.isSuperAdmin && <Link href="/admin/governance">Instance governance</Link>}
        {me.data?.isSuperAdmin && <Link href="/admin/users">Users</Link>}
        {me.data?.isSuperAdmin && <Link href="/admin/restore">Restore</Link>}
        <div className="spacer" />
        <ThemeToggle />
        <div className="who">{me.data?.email}</div>
        <a href="#" onClick={() => void signOut({ callbackUrl: "/login" })}>
          Sign out
        </a>
      </nav>
      <main className="main">
        {unknown ? (
          <p className="error" data-testid="workspace-not-found">
            Workspace {workspace} was not found. See <Link href="/workspaces">all workspaces</Link>.
          </p>
        ) : (
          children
        )}
      </main>
    </div>
  );
}
