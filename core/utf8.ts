// `TextEncoder` and `TextDecoder` are globals in every runtime the core supports (Node 20+, Deno,
// Bun, browsers); core's type check runs without DOM or Node types, so the slice it uses is
// typed here.
interface Utf8Encoder {
  encode(text: string): Uint8Array
  encodeInto(text: string, target: Uint8Array): { read: number; written: number }
}

interface Utf8Decoder {
  decode(bytes: Uint8Array): string
}

const globals = globalThis as unknown as {
  TextEncoder: new () => Utf8Encoder
  TextDecoder: new () => Utf8Decoder
}

/** UTF-8 encoding of strings. */
export const utf8Encoder: Utf8Encoder = new globals.TextEncoder()

/** UTF-8 decoding of bytes (malformed sequences become U+FFFD). */
export const utf8Decoder: Utf8Decoder = new globals.TextDecoder()
