"use client";
import { Search } from "lucide-react";
import dynamic from "next/dynamic";
import { useEffect, useState } from "react";
import type { PalettePage } from "@/components/command-palette-dialog";

// cmdk and the palette's lists are not needed to show a page: they load when the palette first
// opens (or when the pointer or focus reaches its button, so that the first opening is quick).
const loadDialog = () => import("@/components/command-palette-dialog");
const CommandPaletteDialog = dynamic(loadDialog, { ssr: false });

/**
 * Ctrl/⌘-K (or the sidebar's "Search…" button): one box over the workspace's scripts, flows, schedules,
 * resources, variables, recent runs and pages, and the account and admin pages.
 */
export function CommandPalette({
  workspace,
  pages,
  isSuperAdmin,
}: {
  workspace: string | undefined;
  /** The workspace's sidebar pages (empty outside a workspace). */
  pages: PalettePage[];
  isSuperAdmin: boolean;
}) {
  const [open, setOpen] = useState(false);
  // Mounted from the first opening on: closing keeps it, so the dialog can animate out.
  const [opened, setOpened] = useState(false);
  const [shortcut, setShortcut] = useState("Ctrl K");
  if (open && !opened) setOpened(true);

  useEffect(() => {
    if (/Mac|iPhone|iPad/.test(navigator.platform)) setShortcut("⌘K");
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "k") {
        event.preventDefault();
        setOpen((was) => !was);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  return (
    <>
      {/* The sidebar is dark in both themes: the button takes its links' colours. */}
      <button
        type="button"
        className="nav-link mb-1 w-full cursor-pointer border border-[#4a515c] bg-transparent text-left text-[#d9dde3] hover:bg-[#343a44]"
        data-testid="open-command-palette"
        onClick={() => setOpen(true)}
        onPointerEnter={() => void loadDialog()}
        onFocus={() => void loadDialog()}
      >
        <Search aria-hidden className="size-4 shrink-0 opacity-80" />
        <span className="flex-1">Search…</span>
        <kbd className="rounded border border-[#4a515c] bg-transparent px-1 text-xs text-[#d9dde3]">
          {shortcut}
        </kbd>
      </button>
      {opened && (
        <CommandPaletteDialog
          workspace={workspace}
          pages={pages}
          isSuperAdmin={isSuperAdmin}
          open={open}
          setOpen={setOpen}
        />
      )}
    </>
  );
}
