"use client";

/** The root layout itself failed: the last resort, so it brings its own <html> and no styles. */
export default function GlobalError({
  error,
  reset,
}: {
  error: Error & { digest?: string };
  reset: () => void;
}) {
  return (
    <html lang="en">
      <body
        style={{ fontFamily: "system-ui, sans-serif", maxWidth: 640, margin: "4rem auto", padding: "0 1rem" }}
      >
        <h1>Millrace could not show this page</h1>
        <p>
          Something failed before the page could load{error.digest ? ` (reference ${error.digest})` : ""}. Try
          again, or check the server log.
        </p>
        <button type="button" onClick={reset}>
          Try again
        </button>
      </body>
    </html>
  );
}
