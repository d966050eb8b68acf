"use client";
import { useQuery } from "@tanstack/react-query";
import {
  Activity,
  BellRing,
  CalendarClock,
  Database,
  FileCode2,
  FolderTree,
  GitBranch,
  HardDrive,
  House,
  KeyRound,
  Landmark,
  LogOut,
  Menu,
  ScrollText,
  Server,
  ShieldCheck,
  UserCog,
  Users,
  Variable,
  History,
  LayoutGrid,
  Workflow,
  type LucideIcon,
} from "lucide-react";
import { signOut } from "next-auth/react";
import Link from "@/components/ui/link";
import { useParams, usePathname, useRouter } from "next/navigation";
import { useEffect, useState, type ReactNode } from "react";
import { CommandPalette } from "@/components/command-palette";
import { ThemeToggle } from "@/components/theme-toggle";
import { useTRPC } from "@/lib/trpc";
import { cn } from "@/lib/utils";
import { roleCan, useWorkspaceRole, type WorkspaceRole } from "@/lib/workspace-role";
import type { Action } from "@millrace/core/permissions";

const ADMINS_WORKSPACE = "admins";
/** The workspace the sidebar offers on pages outside one (account, admin): the last one opened. */
export const LAST_WORKSPACE_KEY = "millrace-last-workspace";

type NavLink = { href: string; label: string; icon: LucideIcon; exact?: boolean; needs?: Action };

/**
 * The workspace's pages that the role may use: a page whose every action the server would refuse
 * (an operator on Git sync meets "may not workspace manage") is not offered at all.
 */
function workspaceLinks(workspace: string, role: WorkspaceRole | undefined): NavLink[] {
  const base = `/w/${workspace}`;
  const links: NavLink[] = [
    { href: base, label: "Home", icon: House, exact: true },
    { href: `${base}/scripts`, label: "Scripts", icon: FileCode2 },
    { href: `${base}/flows`, label: "Flows", icon: Workflow },
    { href: `${base}/runs`, label: "Runs", icon: Activity },
    { href: `${base}/schedules`, label: "Schedules", icon: CalendarClock },
    { href: `${base}/variables`, label: "Variables", icon: Variable },
    { href: `${base}/resources`, label: "Resources", icon: Database },
    { href: `${base}/members`, label: "Members", icon: Users },
    { href: `${base}/folders`, label: "Folders & groups", icon: FolderTree },
    { href: `${base}/audit`, label: "Audit log", icon: ScrollText },
    { href: `${base}/governance`, label: "Governance", icon: ShieldCheck, needs: "governance.read" },
    // Worker groups and tags are configured by admins; others see queue health on the home page.
    { href: `${base}/workers`, label: "Workers", icon: Server, needs: "workspace.manage" },
    { href: `${base}/git-sync`, label: "Git sync", icon: GitBranch, needs: "workspace.manage" },
    { href: `${base}/object-storage`, label: "Object storage", icon: HardDrive, needs: "workspace.manage" },
  ];
  return links.filter((link) => !link.needs || roleCan(role, link.needs));
}

/**
 * The one layout of every signed-in page: the sidebar (a drawer below 1024 px) and the main
 * column. Inside a workspace the workspace comes from the URL; elsewhere it is the last one opened,
 * so the workspace links stay one click away from the account and admin pages.
 */
export function AppShell({ children }: { children: ReactNode }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const params = useParams<{ workspace?: string }>();
  const routeWorkspace =
    typeof params.workspace === "string" ? decodeURIComponent(params.workspace) : undefined;
  const workspaces = useQuery({ ...trpc.workspace.list.queryOptions(), refetchOnMount: "always" });
  const me = useQuery(trpc.me.queryOptions());
  const [lastWorkspace, setLastWorkspace] = useState<string | undefined>();
  const [drawerOpen, setDrawerOpen] = useState(false);

  useEffect(() => {
    if (routeWorkspace) localStorage.setItem(LAST_WORKSPACE_KEY, routeWorkspace);
    setLastWorkspace(localStorage.getItem(LAST_WORKSPACE_KEY) ?? undefined);
  }, [routeWorkspace]);
  // A navigation closes the drawer.
  useEffect(() => setDrawerOpen(false), [pathname]);

  const known = (id: string | undefined) =>
    !!id && (id === ADMINS_WORKSPACE || !workspaces.data || workspaces.data.some((w) => w.id === id));
  const unknownRouteWorkspace =
    !!routeWorkspace && !!workspaces.data && !workspaces.isFetching && !known(routeWorkspace);
  const workspace =
    routeWorkspace ??
    (known(lastWorkspace) ? lastWorkspace : undefined) ??
    // `admins` (superadmins see it) holds the instance's own jobs: never the one opened by default.
    (workspaces.data?.find((w) => w.id !== ADMINS_WORKSPACE) ?? workspaces.data?.[0])?.id;
  const role = useWorkspaceRole(workspace ?? "");
  const pages = workspace && !unknownRouteWorkspace ? workspaceLinks(workspace, role) : [];

  const accountLinks: NavLink[] = [
    { href: "/workspaces", label: "All workspaces", icon: LayoutGrid, exact: true },
    { href: "/account/tokens", label: "API tokens", icon: KeyRound },
  ];
  if (me.data?.isSuperAdmin) {
    accountLinks.push(
      { href: "/admin/governance", label: "Instance governance", icon: Landmark },
      { href: "/admin/users", label: "Users", icon: UserCog },
      { href: "/admin/restore", label: "Restore", icon: History },
      { href: "/admin/alerts", label: "Alerts", icon: BellRing },
    );
  }
  const isActive = (link: NavLink) =>
    link.exact ? pathname === link.href : pathname === link.href || pathname.startsWith(`${link.href}/`);
  const renderLink = (link: NavLink) => (
    // No prefetch: every page is rendered per request, so prefetching the sidebar's dozen links
    // would cost the server a dozen renders on every page load (measured: a third of a page's
    // time on 2 cores). A click still answers in one round trip.
    <Link
      key={link.href}
      href={link.href}
      prefetch={false}
      className={cn("nav-link", isActive(link) && "active")}
    >
      <link.icon aria-hidden className="size-4 shrink-0 opacity-80" />
      {link.label}
    </Link>
  );

  return (
    <div className="shell">
      <a href="#main-content" className="skip-link">
        Skip to content
      </a>
      <header className="topbar">
        <button
          type="button"
          className="theme-toggle"
          aria-label="Open the menu"
          aria-expanded={drawerOpen}
          onClick={() => setDrawerOpen((open) => !open)}
        >
          <Menu className="size-4" aria-hidden />
        </button>
        <Link href={workspace ? `/w/${workspace}` : "/workspaces"} className="brand">
          <img src="/icon.svg" alt="" width={22} height={22} />
          Millrace
        </Link>
      </header>
      {drawerOpen && <div className="drawer-backdrop" onClick={() => setDrawerOpen(false)} aria-hidden />}
      <nav className={cn("sidebar", drawerOpen && "open")} aria-label="Main">
        <div className="brand">
          <img src="/icon.svg" alt="" width={24} height={24} />
          Millrace
        </div>
        <select
          aria-label="Workspace"
          value={unknownRouteWorkspace || !workspace ? "" : workspace}
          onChange={(event) => {
            if (event.target.value) router.push(`/w/${event.target.value}`);
          }}
        >
          {(unknownRouteWorkspace || !workspace) && (
            <option value="" disabled>
              Choose a workspace
            </option>
          )}
          {(workspaces.data ?? (workspace ? [{ id: workspace, name: workspace }] : [])).map((w) => (
            <option key={w.id} value={w.id}>
              {w.name} ({w.id})
            </option>
          ))}
        </select>
        <CommandPalette
          workspace={workspace && !unknownRouteWorkspace ? workspace : undefined}
          pages={pages}
          isSuperAdmin={!!me.data?.isSuperAdmin}
        />
        {pages.map(renderLink)}
        <div className="nav-section">Account</div>
        {accountLinks.map(renderLink)}
        <div className="spacer" />
        <ThemeToggle />
        <div className="who">{me.data?.email}</div>
        <a href="#" className="nav-link" onClick={() => void signOut({ callbackUrl: "/login" })}>
          <LogOut aria-hidden className="size-4 opacity-80" />
          Sign out
        </a>
      </nav>
      <main className="page-main" id="main-content" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

/** Inside /w/<id>: a workspace that does not exist (or is not the user's) is said so, plainly. */
export function WorkspaceGate({ workspace, children }: { workspace: string; children: ReactNode }) {
  const trpc = useTRPC();
  const workspaces = useQuery({ ...trpc.workspace.list.queryOptions(), refetchOnMount: "always" });
  const unknown =
    !!workspaces.data &&
    !workspaces.isFetching &&
    workspace !== ADMINS_WORKSPACE &&
    !workspaces.data.some((w) => w.id === workspace);
  if (unknown) {
    return (
      <p className="error" data-testid="workspace-not-found">
        Workspace {workspace} was not found. See <Link href="/workspaces">all workspaces</Link>.
      </p>
    );
  }
  return children;
}
