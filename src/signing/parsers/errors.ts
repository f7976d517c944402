// What a parser throws on input it cannot read (docs/signing-policies.md §3): the activity
// turns it into a 400 before any policy is consulted, so unparsable input never reaches a
// decision and is never recorded.
export class ParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ParseError";
  }
}

/** Bytes of a hex string, with or without 0x; anything else is a ParseError naming `what`. */
export function hexBytes(hex: string, what: string): Uint8Array {
  const body = hex.startsWith("0x") || hex.startsWith("0X") ? hex.slice(2) : hex;
  if (body.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(body)) throw new ParseError(`${what} is not hex`);
  return Uint8Array.from(Buffer.from(body, "hex"));
}

export const toHex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
