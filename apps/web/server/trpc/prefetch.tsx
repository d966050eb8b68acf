import { headers } from "next/headers";
import type { ReactNode } from "react";
import { PREFETCH_FAILED, PrefetchedQueries, type PrefetchedQuery } from "@/components/prefetched-queries";
import { appRouter } from "./app-router.ts";
import { createTrpcContext } from "./init.ts";

/** A tRPC query to start with the page: the procedure's path and the exact input the page asks for. */
export type PrefetchCall = readonly [path: string, input?: unknown];

/**
 * Starts the page's tRPC queries on the server as the page is rendered, as the caller (the same
 * procedures, checks and answers as /api/trpc), and streams their answers to the browser with
 * the page: the page's data is there when it has hydrated, instead of one round trip later.
 * Nothing waits for them here (the HTML is not held back). An input must match the page's own
 * useQuery input exactly, or the answer is simply not used.
 */
export async function Prefetch({ calls, children }: { calls: PrefetchCall[]; children: ReactNode }) {
  const requestHeaders = await headers();
  const context = createTrpcContext(new Request("http://localhost/api/trpc", { headers: requestHeaders }));
  context.catch(() => {}); // each query below answers PREFETCH_FAILED instead
  const queries: PrefetchedQuery[] = calls.map(([path, input]) => ({
    path,
    input,
    promise: context
      .then((ctx) => answer(appRouter.createCaller(ctx), path, input))
      .catch(() => PREFETCH_FAILED),
  }));
  return <PrefetchedQueries queries={queries}>{children}</PrefetchedQueries>;
}

async function answer(caller: unknown, path: string, input: unknown): Promise<unknown> {
  try {
    const procedure = path
      .split(".")
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller) as (
      input: unknown,
    ) => Promise<unknown>;
    // What the HTTP endpoint would send: JSON (dates as strings, no undefined).
    const json = JSON.stringify(await procedure(input));
    return json === undefined ? null : (JSON.parse(json) as unknown);
  } catch {
    // The browser asks again and gets the error as tRPC's client reports it.
    return PREFETCH_FAILED;
  }
}
