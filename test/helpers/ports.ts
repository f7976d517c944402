// Ports for tests that must know a server's address before it starts (its public URL goes
// into its configuration), or need an address where nothing listens.
import net from "node:net";
import { readFileSync } from "node:fs";
import { randomInt } from "node:crypto";

/**
 * The low end of the kernel's ephemeral range: every `listen(0)` and every outgoing connection
 * takes its port from that range, so a port picked there and released can be taken again by a
 * neighbouring test's client socket before our server binds it (a server that then fails with
 * EADDRINUSE). Below it, only another explicit pick can collide.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const bindable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = net.createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });

/** A port nothing listens on right now, outside the ephemeral range (bound once, then released). */
export async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1;
  for (let i = 0; i < 100; i++) {
    const port = randomInt(10_000, high + 1);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port between 10000 and ${high} after 100 tries`);
}
