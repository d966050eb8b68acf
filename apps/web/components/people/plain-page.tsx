import Link from "next/link";
import type { ReactNode } from "react";

/** Pages outside a workspace (account, instance admin): one column with a way back. */
export function PlainPage({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="main" style={{ maxWidth: 1100, margin: "0 auto" }}>
      <nav className="row" aria-label="Account" style={{ marginBottom: "1rem" }}>
        <Link href="/workspaces">← Workspaces</Link>
        <Link href="/account/tokens">API tokens</Link>
        <Link href="/admin/governance">Instance governance</Link>
        <Link href="/admin/users">Users</Link>
        <Link href="/admin/restore">Restore</Link>
      </nav>
      <h1>{title}</h1>
      {children}
    </main>
  );
}
