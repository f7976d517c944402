// Command-line values of the CLI's subcommands (`--name value`); settings shared with the
// server's environment go through config.ts instead.

/** The value after `name`, if the flag is given; a flag without a value is an error. */
export function flag(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const v = argv[i + 1];
  if (v === undefined || v.startsWith("--")) throw new Error(`${name} needs a value`);
  return v;
}
