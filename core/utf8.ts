// `TextEncoder` is a global in every runtime the core supports (Node 20+, Deno,
// Bun, browsers); core's type check runs without DOM or Node types, so the slice it uses is
// typed here.
interface Utf8Encoder {
  encode(text: string): Uint8Array
  encodeInto(text: string, target: Uint8Array): { read: number; written: number }
}

const globals = globalThis as unknown as { TextEncoder: new () => Utf8Encoder }

/** UTF-8 encoding of strings. */
export const utf8Encoder: Utf8Encoder = new globals.TextEncoder()
