"use client";
import Link from "@/components/ui/link";
import { useEffect } from "react";
import { Button } from "@/components/ui/button";

/**
 * A page that threw while rendering: a plain sentence and a way to retry, instead of Next's
 * blank "Application error". The digest ties the message to the server's log line.
 */
export default function ErrorPage({
  error,
  reset,
}: {
  error: Error & { digest?: string };
  reset: () => void;
}) {
  useEffect(() => console.error(error), [error]);
  return (
    <div className="mx-auto my-16 max-w-[640px]" role="alert">
      <h1>Something went wrong on this page</h1>
      <p>
        The page could not be shown. Trying again often helps; if it keeps happening, the server log has the
        details
        {error.digest ? ` (reference ${error.digest})` : ""}.
      </p>
      <div className="row">
        <Button variant="primary" onClick={reset}>
          Try again
        </Button>
        <Link href="/workspaces">Your workspaces</Link>
      </div>
    </div>
  );
}
