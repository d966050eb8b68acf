import Link from "@/components/ui/link";

/** Any unknown URL: a plain sentence and ways back, instead of Next's bare 404. */
export default function NotFound() {
  return (
    <main className="page-main" style={{ maxWidth: 640, margin: "4rem auto" }}>
      <h1>Page not found</h1>
      <p>There is no page at this address. It may have moved, or the link may be mistyped.</p>
      <nav className="row" aria-label="Ways back">
        <Link href="/workspaces">Your workspaces</Link>
        <Link href="/login">Sign in</Link>
      </nav>
    </main>
  );
}
