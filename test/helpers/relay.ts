// A TCP relay whose upstream connections leave from another loopback address (127.0.0.2), so
// a test can show the service a second client address without a second machine.
import net from "node:net";

/** A TCP relay on 127.0.0.1 whose connections to `port` leave from `localAddress`. */
export async function relayFrom(localAddress: string, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: "127.0.0.1", port, localAddress });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port: relayPort } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${relayPort}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
