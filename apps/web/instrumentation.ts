// Runs once when a server process starts: the leader loop (zombie monitor, retention).
export async function register(): Promise<void> {
  // eslint-disable-next-line no-restricted-properties
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startBackgroundTasks } = await import("./server/background.ts");
  await startBackgroundTasks();
}
