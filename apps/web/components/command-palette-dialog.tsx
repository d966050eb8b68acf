"use client";
import { useQuery } from "@tanstack/react-query";
import { Command } from "cmdk";
import {
  BellRing,
  Activity,
  CalendarClock,
  Database,
  FileCode2,
  History,
  KeyRound,
  Landmark,
  LayoutGrid,
  UserCog,
  Variable,
  Workflow,
  type LucideIcon,
} from "lucide-react";
import { useRouter } from "next/navigation";
import { useState, type ReactNode } from "react";
import { Dialog, DialogContent } from "@/components/ui/dialog";
import { errorMessage } from "@/lib/errors";
import { rankGroups } from "@/lib/palette-rank";
import { useTRPC } from "@/lib/trpc";

/** A page the palette offers (the sidebar's links, given by the layout). */
export type PalettePage = { href: string; label: string; icon: LucideIcon };

type Entry = { key: string; label: ReactNode; keywords: string[]; href: string; icon: LucideIcon };

const itemClass =
  "flex cursor-pointer items-center gap-2 rounded px-2 py-1.5 text-sm data-[selected=true]:bg-hover";
const groupClass =
  "[&_[cmdk-group-heading]]:px-2 [&_[cmdk-group-heading]]:pb-1 [&_[cmdk-group-heading]]:pt-2 " +
  "[&_[cmdk-group-heading]]:text-xs [&_[cmdk-group-heading]]:font-semibold [&_[cmdk-group-heading]]:text-muted";

const enc = (path: string) => path.split("/").map(encodeURIComponent).join("/");

function when(iso: string) {
  return new Date(iso).toLocaleString();
}

/**
 * The palette's dialog (cmdk), loaded the first time the palette opens (command-palette.tsx): what
 * it lists comes from one query (search.palette) made when it opens, scoped to what the caller may read.
 */
export default function CommandPaletteDialog({
  workspace,
  pages,
  isSuperAdmin,
  open,
  setOpen,
}: {
  workspace: string | undefined;
  /** The workspace's sidebar pages (empty outside a workspace). */
  pages: PalettePage[];
  isSuperAdmin: boolean;
  open: boolean;
  setOpen: (open: boolean) => void;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  // Each opening starts from an empty box, as the dialog's own input did before it was controlled.
  const [search, setSearch] = useState("");
  const [wasOpen, setWasOpen] = useState(open);
  if (open !== wasOpen) {
    setWasOpen(open);
    if (!open) setSearch("");
  }
  const data = useQuery({
    ...trpc.search.palette.queryOptions({ workspace: workspace ?? "" }),
    enabled: open && !!workspace,
    staleTime: 0,
  });

  const go = (href: string) => {
    setOpen(false);
    router.push(href);
  };

  const accountPages: PalettePage[] = [
    { href: "/workspaces", label: "All workspaces", icon: LayoutGrid },
    { href: "/account/tokens", label: "API tokens", icon: KeyRound },
  ];
  if (isSuperAdmin) {
    accountPages.push(
      { href: "/admin/governance", label: "Instance governance", icon: Landmark },
      { href: "/admin/users", label: "Users", icon: UserCog },
      { href: "/admin/restore", label: "Restore", icon: History },
      { href: "/admin/alerts", label: "Alerts", icon: BellRing },
    );
  }

  const base = workspace ? `/w/${workspace}` : "";
  const d = data.data;
  const groups: { heading: string; entries: Entry[] }[] = d
    ? [
        {
          heading: "Scripts",
          entries: d.scripts.map((s) => ({
            key: `script:${s.path}`,
            label: (
              <>
                <span className="font-mono">{s.path}</span>
                {s.summary && <span className="truncate text-muted">{s.summary}</span>}
              </>
            ),
            keywords: [s.path, s.summary, s.language, "script"],
            href: `${base}/scripts/get/${enc(s.path)}`,
            icon: FileCode2,
          })),
        },
        {
          heading: "Flows",
          entries: d.flows.map((f) => ({
            key: `flow:${f.path}`,
            label: (
              <>
                <span className="font-mono">{f.path}</span>
                {f.summary && <span className="truncate text-muted">{f.summary}</span>}
              </>
            ),
            keywords: [f.path, f.summary, "flow"],
            href: `${base}/flows/get/${enc(f.path)}`,
            icon: Workflow,
          })),
        },
        {
          heading: "Schedules",
          entries: d.schedules.map((s) => ({
            key: `schedule:${s.path}`,
            label: (
              <>
                <span className="font-mono">{s.path}</span>
                <span className="truncate text-muted">
                  {s.scriptPath}
                  {s.enabled ? "" : " (disabled)"}
                </span>
              </>
            ),
            keywords: [s.path, s.scriptPath, "schedule"],
            href: `${base}/schedules/edit/${enc(s.path)}`,
            icon: CalendarClock,
          })),
        },
        {
          heading: "Resources",
          entries: d.resources.map((r) => ({
            key: `resource:${r.path}`,
            label: (
              <>
                <span className="font-mono">{r.path}</span>
                <span className="text-muted">{r.resourceType}</span>
              </>
            ),
            keywords: [r.path, r.resourceType, "resource"],
            href: `${base}/resources/edit/${enc(r.path)}`,
            icon: Database,
          })),
        },
        {
          heading: "Variables",
          entries: d.variables.map((v) => ({
            key: `variable:${v.path}`,
            label: (
              <>
                <span className="font-mono">{v.path}</span>
                {v.isSecret && <span className="text-muted">secret</span>}
              </>
            ),
            keywords: [v.path, "variable"],
            href: `${base}/variables/edit/${enc(v.path)}`,
            icon: Variable,
          })),
        },
        {
          heading: "Recent runs",
          entries: d.runs.map((r) => {
            const name = r.scriptPath ?? (r.kind === "preview" ? "preview" : r.kind);
            return {
              key: `run:${r.id}`,
              label: (
                <>
                  <span className="font-mono">{name}</span>
                  <span className={`status status-${r.status}`}>{r.status}</span>
                  <span className="text-muted">{when(r.createdAt)}</span>
                </>
              ),
              keywords: [name, r.status, r.id, "run"],
              href: `${base}/runs/${r.id}`,
              icon: Activity,
            };
          }),
        },
      ]
    : [];
  const pageGroup = (heading: string, list: PalettePage[]) => ({
    heading,
    entries: list.map((p) => ({
      key: `page:${p.href}`,
      label: p.label,
      // Not the href: it holds the workspace's id, which would make every page match it.
      keywords: [p.label, "page"],
      href: p.href,
      icon: p.icon,
    })),
  });
  const shown = rankGroups(
    [...groups, pageGroup("Pages", pages), pageGroup("Account", accountPages)],
    search,
  );

  return (
    <Dialog open={open} onOpenChange={setOpen}>
      <DialogContent title="Go to…" className="w-[min(92vw,640px)] p-3" data-testid="command-palette">
        <Command
          label="Search scripts, flows, schedules, resources, variables, runs and pages"
          loop
          vimBindings={false}
          shouldFilter={false}
          data-loaded={d ? "true" : "false"}
        >
          <Command.Input
            value={search}
            onValueChange={setSearch}
            placeholder="Search scripts, flows, schedules, variables, runs, pages…"
            className="mb-2 w-full"
            autoFocus
          />
          <Command.List className="max-h-[60vh] overflow-y-auto" label="Results">
            {data.isFetching && !d && <Command.Loading>Loading…</Command.Loading>}
            {data.error && (
              <p className="error" role="alert">
                {errorMessage(data.error)}
              </p>
            )}
            <Command.Empty className="px-2 py-3 text-muted">Nothing matches.</Command.Empty>
            {shown.map((group) => (
              <Command.Group key={group.heading} heading={group.heading} className={groupClass}>
                {group.entries.map((entry) => (
                  <Command.Item
                    key={entry.key}
                    value={entry.key}
                    keywords={entry.keywords}
                    className={itemClass}
                    onSelect={() => go(entry.href)}
                  >
                    <entry.icon aria-hidden className="size-4 shrink-0 opacity-70" />
                    {entry.label}
                  </Command.Item>
                ))}
              </Command.Group>
            ))}
          </Command.List>
        </Command>
      </DialogContent>
    </Dialog>
  );
}
