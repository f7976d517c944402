// Command-line options of the benchmarks: `--flag value` wins over the environment variable.

export function option(flag: string, env: string): string | undefined {
  const i = process.argv.indexOf(flag);
  if (i >= 0) {
    const v = process.argv[i + 1];
    if (v === undefined || v.startsWith("--")) throw new Error(`${flag} needs a value`);
    return v;
  }
  const e = process.env[env];
  return e === undefined || e === "" ? undefined : e;
}

export function num(flag: string, env: string, dflt: number, min: number, max: number): number {
  const v = option(flag, env);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`${flag} must be a number in [${min}, ${max}], got ${v}`);
  return n;
}
