import { getServerSession } from "next-auth";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { AppShell } from "@/components/app-shell";
import { getAuthOptions } from "@/server/auth/options";
import { Prefetch } from "@/server/trpc/prefetch";

export const dynamic = "force-dynamic";

export default async function AuthenticatedLayout({ children }: { children: ReactNode }) {
  const session = await getServerSession(await getAuthOptions());
  if (!session) redirect("/login");
  // The shell's own queries (and most pages' role checks) start with the page.
  return (
    <Prefetch calls={[["me"], ["workspace.list"]]}>
      <AppShell>{children}</AppShell>
    </Prefetch>
  );
}
