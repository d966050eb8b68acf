// A TCP proxy for tests that cut a process off from PostgreSQL or from its server: every
// connection dropped and new ones refused until restored (the partition and database-away drills).
import net from "node:net";

/**
 * A TCP proxy (to PostgreSQL, or to the server for an agent) that can be cut (every connection
 * dropped, new ones refused) and restored.
 */
export async function tcpProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let up = true;
  const server = net.createServer((client) => {
    if (!up) return client.destroy();
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(target);
  url.port = String((server.address() as net.AddressInfo).port);
  url.searchParams.delete("host");
  const cut = () => {
    up = false;
    for (const socket of sockets) socket.destroy();
  };
  return {
    url: url.toString(),
    cut,
    restore: () => (up = true),
    close: () => new Promise<void>((resolve) => (cut(), server.close(() => resolve()))),
  };
}
