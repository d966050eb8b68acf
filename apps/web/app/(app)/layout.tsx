import { getServerSession } from "next-auth";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { AppShell } from "@/components/app-shell";
import { getAuthOptions } from "@/server/auth/options";

export const dynamic = "force-dynamic";

export default async function AuthenticatedLayout({ children }: { children: ReactNode }) {
  const session = await getServerSession(await getAuthOptions());
  if (!session) redirect("/login");
  return <AppShell>{children}</AppShell>;
}
