// The PSBT thread (./psbt-thread.ts starts it): reads and signs Bitcoin PSBTs posted to it,
// one at a time, each answered by its id with plain data (docs/signing.md §6). It holds no
// store and no master key: a private key arrives with a signing request and is zeroed after it.
import { parentPort } from "node:worker_threads";
import { parseBitcoinPsbt, signBitcoinPsbt, type BitcoinPsbtView } from "./parsers/bitcoin.ts";
import { errorAsData, type FromPsbtThread, type ToPsbtThread } from "./psbt-thread-protocol.ts";

const port = parentPort!;

/** The view alone: the thread keeps the parse (for signing next), the main thread needs the plain parts. */
function viewOf(hex: string, network: ToPsbtThread["network"]): BitcoinPsbtView {
  const { facts, owners, legacyBytesEach } = parseBitcoinPsbt(hex, network);
  return { facts, owners, legacyBytesEach };
}

async function handle(m: ToPsbtThread): Promise<FromPsbtThread> {
  try {
    if (m.op === "read") return { id: m.id, view: viewOf(m.hex, m.network) };
    try {
      return { id: m.id, signed: await signBitcoinPsbt(parseBitcoinPsbt(m.hex, m.network), m.privateKey, m.publicKey) };
    } finally {
      m.privateKey.fill(0);
    }
  } catch (err) {
    return { id: m.id, error: errorAsData(err) };
  }
}

port.on("message", (m: ToPsbtThread) => {
  void handle(m).then((answer) => port.postMessage(answer));
});
