/**
 * MD5 (RFC 1321) of a UTF-8 string, as lower-case hex.
 *
 * Tape file names are `md5(workspace)[:16]__md5(session)[:16]` (spec §9.3), computed on every
 * turn; loading `node:crypto` for two short hashes costs a one-shot `bub run` about 5 ms, this
 * costs microseconds. Not for anything secret: MD5 only names things here.
 *
 * ```ts
 * md5Hex("abc"); // "900150983cd24fb0d6963f7d28e17f72"
 * ```
 */

// Per-step left rotations and the sine-derived constants of the four rounds.
const SHIFTS = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];
const K = Array.from({ length: 64 }, (_, index) => Math.floor(Math.abs(Math.sin(index + 1)) * 2 ** 32) >>> 0);
const encoder = new TextEncoder();

export function md5Hex(text: string): string {
  const data = encoder.encode(text);
  // Message + 0x80 + zero padding to 56 mod 64 + the bit length, little-endian, in 64 bits.
  const blocks = Math.ceil((data.length + 9) / 64);
  const bytes = new Uint8Array(blocks * 64);
  bytes.set(data);
  bytes[data.length] = 0x80;
  const view = new DataView(bytes.buffer);
  const bits = data.length * 8;
  view.setUint32(bytes.length - 8, bits >>> 0, true);
  view.setUint32(bytes.length - 4, Math.floor(bits / 2 ** 32), true);

  let a0 = 0x67452301;
  let b0 = 0xefcdab89;
  let c0 = 0x98badcfe;
  let d0 = 0x10325476;
  const words = new Uint32Array(16);
  for (let block = 0; block < blocks; block++) {
    for (let word = 0; word < 16; word++) words[word] = view.getUint32(block * 64 + word * 4, true);
    let a = a0;
    let b = b0;
    let c = c0;
    let d = d0;
    for (let step = 0; step < 64; step++) {
      const round = step >> 4;
      let f: number;
      let index: number;
      if (round === 0) {
        f = (b & c) | (~b & d);
        index = step;
      } else if (round === 1) {
        f = (d & b) | (~d & c);
        index = (5 * step + 1) & 15;
      } else if (round === 2) {
        f = b ^ c ^ d;
        index = (3 * step + 5) & 15;
      } else {
        f = c ^ (b | ~d);
        index = (7 * step) & 15;
      }
      const sum = (a + f + K[step]! + words[index]!) | 0;
      const shift = SHIFTS[(round << 2) | (step & 3)]!;
      a = d;
      d = c;
      c = b;
      b = (b + ((sum << shift) | (sum >>> (32 - shift)))) | 0;
    }
    a0 = (a0 + a) | 0;
    b0 = (b0 + b) | 0;
    c0 = (c0 + c) | 0;
    d0 = (d0 + d) | 0;
  }
  let hex = "";
  for (const word of [a0, b0, c0, d0]) {
    for (let shift = 0; shift < 32; shift += 8) hex += ((word >>> shift) & 0xff).toString(16).padStart(2, "0");
  }
  return hex;
}
