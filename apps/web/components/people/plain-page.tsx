import type { ReactNode } from "react";

/** Pages outside a workspace (account, instance admin): one readable column under the shell. */
export function PlainPage({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="mx-auto max-w-[1100px]">
      <h1>{title}</h1>
      {children}
    </div>
  );
}
