/** The field a tRPC error blames (set by the server's error formatter), to show it in place. */
export function errorField(error: unknown): string | undefined {
  const data = (error as { data?: { field?: string } } | null)?.data;
  return data?.field ?? undefined;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
