// sigil <command>: a registry of commands, each in its own module.
import { serve } from "./serve.ts";
import { init } from "./init.ts";
import { webhookKeys } from "./webhook-keys.ts";
import { serviceKeys } from "./service-keys.ts";
import { seed } from "./seed.ts";
import { proxy } from "./proxy.ts";
import { masterKey } from "./master-key.ts";
import { KNOBS } from "../config.ts";
import { knobsUsage } from "../config/define.ts";

const COMMANDS: Record<string, { run: (argv: string[]) => Promise<void>; help: string }> = {
  serve: { run: serve, help: "run the public API (default port 8080) and the auth proxy (8081; SIGIL_AUTH_PROXY=off: API only)" },
  proxy: {
    run: proxy,
    help: "run the auth proxy alone (default port 8081); proxy --print-secret prints SIGIL_AUTH_PROXY_SECRET for another host",
  },
  init: { run: init, help: 'bootstrap a root organization: init --name "<org>" [--json] [--api-public-key <hex>]' },
  "webhook-keys": { run: webhookKeys, help: "webhook signing keys: webhook-keys list | rotate | retire <kid>" },
  seed: { run: seed, help: "bulk test data: seed [--scale F | --suborgs N --activities N --users N] [--json] (sigil seed --help)" },
  "master-key": {
    run: masterKey,
    help: "the key-encryption key: master-key create-pkcs11 (on the PKCS#11 token) | rotate (re-wrap every data key; docs/custody.md §1, §4)",
  },
  "service-keys": { run: serviceKeys, help: "service P-256 keys: service-keys list | rotate [purpose] | retire <keyId>" },
};

function usage(): string {
  return ["usage: sigil <command> [flags]", "", ...Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(14)}${c.help}`)].join("\n");
}

export async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  const cmd = name ? COMMANDS[name] : undefined;
  if (!cmd) {
    process.stderr.write(usage() + "\n");
    process.exitCode = name === "--help" || name === "help" ? 0 : 2;
    return;
  }
  if ((name === "serve" || name === "init" || name === "proxy") && rest.includes("--help")) {
    // Both read the service's configuration: its flags come from the knob list (docs/configuration.md §1).
    process.stdout.write(
      `usage: sigil ${name} [flags]\n  ${cmd.help}\n\nSettings (a flag wins over its variable; docs/configuration.md §1):\n${knobsUsage(KNOBS)}\n`,
    );
    return;
  }
  try {
    await cmd.run(rest);
  } catch (err) {
    process.stderr.write(`sigil ${name}: ${(err as Error).message}\n`);
    process.exitCode = 1;
    // A server that failed to start has released what it opened; should anything still hold
    // the event loop, the process exits all the same rather than linger without serving
    // (docs/operations.md §1).
    if (name === "serve" || name === "proxy") setTimeout(() => process.exit(1), 10_000).unref();
  }
}
