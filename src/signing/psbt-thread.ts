// Bitcoin PSBTs are read and signed on a thread of their own (docs/signing.md §6): reading a
// 256-input PSBT is one synchronous block of 8–39 ms and signing it some 25 ms of native
// signatures, which every other tenant's request on the main thread would wait out. The main
// thread gets plain data back — the facts and what the signer check reads (BitcoinPsbtView),
// or the signed PSBT as hex — and awaits it like any other I/O. The thread keeps its last few
// reads (parsers/bitcoin.ts `parseBitcoinPsbt`), so signing after a read does not read again.
//
// One thread for the process, started at the first PSBT, referenced only while it has work.
// Where it cannot start (a bundle without its file) or dies, the same functions run here on
// the main thread, as they did before: slower for others, the same answers.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { NoOwnInputError, parseBitcoinPsbt, signBitcoinPsbt, type BitcoinPsbtView } from "./parsers/bitcoin.ts";
import { ParseError } from "./parsers/errors.ts";
import type { BitcoinNetwork, FromPsbtThread, ToPsbtThread } from "./psbt-thread-protocol.ts";

function errorFromData(e: { name: string; message: string }): Error {
  if (e.name === "NoOwnInputError") return new NoOwnInputError(e.message);
  if (e.name === "ParseError") return new ParseError(e.message);
  return new Error(`PSBT thread: ${e.message}`);
}

interface Pending {
  resolve(m: FromPsbtThread): void;
  reject(err: Error): void;
}

// src/signing/psbt-worker.mjs registers tsx; dist/cli/psbt-worker.mjs is the bundle's (scripts/build.mjs).
const WORKER_FILE = new URL("./psbt-worker.mjs", import.meta.url);
let worker: Worker | undefined;
/** False once the thread could not start: everything runs on the main thread from then on. */
let usable = existsSync(fileURLToPath(WORKER_FILE));
const pending = new Map<number, Pending>();
let nextId = 1;

function start(): Worker {
  const w = new Worker(WORKER_FILE);
  w.unref(); // referenced only while work is out (post)
  let answered = false;
  w.on("message", (m: FromPsbtThread) => {
    answered = true;
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (pending.size === 0) w.unref();
    p.resolve(m);
  });
  const lost = (why: string) => {
    if (worker !== w) return; // 'error' is followed by 'exit': handled once
    worker = undefined;
    // A thread that never answered will not start next time either.
    if (!answered) usable = false;
    for (const p of pending.values()) p.reject(new Error(`PSBT thread lost: ${why}`));
    pending.clear();
    void w.terminate().catch(() => {});
  };
  w.on("error", (err) => lost(err.message));
  w.on("exit", (code) => lost(`exit code ${code}`));
  return w;
}

type Unnumbered = ToPsbtThread extends infer T ? (T extends unknown ? Omit<T, "id"> : never) : never;

/** Posts to the thread; undefined when there is none (then the caller runs the work here). */
function post(m: Unnumbered, transfer: ArrayBuffer[] = []): Promise<FromPsbtThread> | undefined {
  if (!usable) return undefined;
  let w: Worker;
  try {
    w = worker ??= start();
  } catch {
    usable = false;
    return undefined;
  }
  const id = nextId++;
  return new Promise<FromPsbtThread>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    if (pending.size === 1) w.ref();
    w.postMessage({ ...m, id } as ToPsbtThread, transfer);
  });
}

/** Reads a PSBT given as hex (parsers/bitcoin.ts `parseBitcoinPsbt`) off the main thread. */
export async function readPsbtOffThread(hex: string, network: BitcoinNetwork): Promise<BitcoinPsbtView> {
  const answer = await post({ op: "read", hex, network })?.catch(() => undefined);
  if (!answer) return parseBitcoinPsbt(hex, network);
  if ("error" in answer) throw errorFromData(answer.error);
  if (!("view" in answer)) throw new Error("PSBT thread: no view in its answer");
  return answer.view;
}

/**
 * Signs every input of the key (parsers/bitcoin.ts `signBitcoinPsbt`) off the main thread.
 * The thread gets its own copy of the private key (moved, not cloned) and zeroes it when done;
 * the caller zeroes its own as before.
 */
export async function signPsbtOffThread(
  hex: string,
  network: BitcoinNetwork,
  privateKey: Uint8Array,
  publicKey: Uint8Array,
): Promise<string> {
  const copy = Uint8Array.from(privateKey);
  const out = post({ op: "sign", hex, network, privateKey: copy, publicKey }, [copy.buffer]);
  const answer = await out?.catch(() => undefined);
  if (copy.byteLength) copy.fill(0); // not moved (no thread): zero the copy; moved, it is empty here
  if (!answer) return signBitcoinPsbt(parseBitcoinPsbt(hex, network), privateKey, publicKey);
  if ("error" in answer) throw errorFromData(answer.error);
  if (!("signed" in answer)) throw new Error("PSBT thread: no signed PSBT in its answer");
  return answer.signed;
}

/** Whether the thread is running (after a first PSBT): false means the main thread does the work. */
export function psbtThreadRunning(): boolean {
  return usable && worker !== undefined;
}
