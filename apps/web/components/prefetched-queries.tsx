"use client";
import { useQueryClient, type QueryKey } from "@tanstack/react-query";
import { useLayoutEffect, useRef, type ReactNode } from "react";
import { useTRPCClient } from "@/lib/trpc";

/** What the server answers for a query it could not make (the browser then makes it itself). */
export const PREFETCH_FAILED = "__millrace_prefetch_failed__";

export interface PrefetchedQuery {
  /** The tRPC procedure, e.g. "script.get". */
  path: string;
  input?: unknown;
  /** Its JSON answer as the HTTP endpoint would give it, or PREFETCH_FAILED. */
  promise: Promise<unknown>;
}

/** tRPC's query key for a procedure and input (@trpc/tanstack-react-query's format). */
function queryKeyOf(segments: string[], input: unknown): QueryKey {
  return [segments, input === undefined ? { type: "query" } : { input, type: "query" }];
}

/**
 * The queries the server started with the page (server/trpc/prefetch.tsx), handed to the page's
 * useQuery calls as fetches already under way: their data arrives with the page instead of one
 * round trip after hydration. The server's HTML and the first render in the browser both show the
 * queries as loading (nothing is put in the cache before React has hydrated), so server and
 * browser never disagree (local times, for instance); a query the server could not make is made
 * by the browser as usual, with its usual error.
 */
export function PrefetchedQueries({
  queries,
  children,
}: {
  queries: PrefetchedQuery[];
  children: ReactNode;
}) {
  const queryClient = useQueryClient();
  const trpcClient = useTRPCClient();
  const handed = useRef<PrefetchedQuery[] | null>(null);
  // A layout effect: before the page's queries subscribe (passive effects) and fetch on their own.
  useLayoutEffect(() => {
    if (handed.current === queries) return;
    handed.current = queries;
    for (const { path, input, promise } of queries) {
      const segments = path.split(".");
      const query = queryClient.getQueryCache().build(queryClient, { queryKey: queryKeyOf(segments, input) });
      // Cached data or a fetch already under way (a client-side navigation): left to the page.
      if (query.state.data !== undefined || query.state.fetchStatus !== "idle") continue;
      const initialPromise = Promise.resolve(promise).then((data) => {
        if (data !== PREFETCH_FAILED) return data;
        const procedure = segments.reduce<unknown>(
          (node, key) => (node as Record<string, unknown>)[key],
          trpcClient,
        ) as { query(input: unknown): Promise<unknown> };
        return procedure.query(input);
      });
      void query.fetch(undefined, { initialPromise }).catch(() => {});
    }
  }, [queries, queryClient, trpcClient]);
  return children;
}
