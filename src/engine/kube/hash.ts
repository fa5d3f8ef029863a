/**
 * kube-proxy's chain names: `KUBE-SVC-` + the first 16 characters of base32(sha256(servicePortName +
 * protocol)), and `KUBE-SEP-` over servicePortName + protocol + endpoint (kubernetes
 * pkg/proxy/iptables/proxier.go, `portProtoHash` / `servicePortEndpointChainName`; Go's
 * base32.StdEncoding). SHA-256 is implemented here because the engine must also run in a browser, where
 * the only digest API (WebCrypto) is asynchronous.
 */

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

// Scratch space reused across calls: kube-proxy names one chain per endpoint, so a 100k-endpoint cluster
// hashes 100k short strings. Words are kept as signed 32-bit integers (`| 0`), which V8 keeps unboxed.
let scratch = new Uint8Array(256);
const W = new Int32Array(64);
const H = new Int32Array(8);
const encoder = new TextEncoder();

/** The message's bytes (UTF-8) into `scratch`, zero-padded to whole 64-byte blocks; returns the length. */
function encodeInto(text: string): number {
  let ascii = true;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 127) ascii = false;
  const bytes = ascii ? null : encoder.encode(text);
  const n = bytes ? bytes.length : text.length;
  const need = ((n + 9 + 63) >> 6) << 6;
  if (scratch.length < need) scratch = new Uint8Array(need * 2);
  const p = scratch;
  if (bytes) p.set(bytes);
  else for (let i = 0; i < n; i++) p[i] = text.charCodeAt(i);
  for (let i = n; i < need; i++) p[i] = 0;
  return n;
}

/** One block of the compression function (FIPS 180-4 §6.2.2) over `W[0..15]`, updating `H`. */
function compress(): void {
  const w = W;
  for (let i = 16; i < 64; i++) {
    const a = w[i - 15]!;
    const b = w[i - 2]!;
    const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
    const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
    w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
  }
  let a = H[0]!;
  let b = H[1]!;
  let c = H[2]!;
  let d = H[3]!;
  let e = H[4]!;
  let f = H[5]!;
  let g = H[6]!;
  let hh = H[7]!;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const ch = (e & f) ^ (~e & g);
    const t1 = (hh + S1 + ch + K[i]! + w[i]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const maj = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (S0 + maj) | 0;
    hh = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0]! + a) | 0;
  H[1] = (H[1]! + b) | 0;
  H[2] = (H[2]! + c) | 0;
  H[3] = (H[3]! + d) | 0;
  H[4] = (H[4]! + e) | 0;
  H[5] = (H[5]! + f) | 0;
  H[6] = (H[6]! + g) | 0;
  H[7] = (H[7]! + hh) | 0;
}

function initState(): void {
  H[0] = 0x6a09e667;
  H[1] = 0xbb67ae85 | 0;
  H[2] = 0x3c6ef372;
  H[3] = 0xa54ff53a | 0;
  H[4] = 0x510e527f;
  H[5] = 0x9b05688c | 0;
  H[6] = 0x1f83d9ab;
  H[7] = 0x5be0cd19;
}

/**
 * The padded single block of the ASCII message `a + b + c` (at most 55 characters: every chain name
 * kube-proxy hashes), written into `W` straight from the parts; false when a character is not ASCII.
 */
function singleBlock(a: string, b: string, c: string): boolean {
  const na = a.length;
  const nab = na + b.length;
  const n = nab + c.length;
  for (let i = 0; i < 14; i++) {
    let v = 0;
    for (let j = i * 4; j < i * 4 + 4; j++) {
      let ch = 0;
      if (j < n) {
        ch = j < na ? a.charCodeAt(j) : j < nab ? b.charCodeAt(j - na) : c.charCodeAt(j - nab);
        if (ch > 127) return false;
      } else if (j === n) ch = 0x80;
      v = (v << 8) | ch;
    }
    W[i] = v;
  }
  W[14] = 0;
  W[15] = n * 8;
  return true;
}

/** SHA-256 (FIPS 180-4) of `a + b + c` as UTF-8, left in `H`. */
function digest(a: string, b = '', c = ''): void {
  initState();
  if (a.length + b.length + c.length <= 55 && singleBlock(a, b, c)) {
    compress();
    return;
  }
  const len = encodeInto(a + b + c);
  const total = ((len + 9 + 63) >> 6) << 6;
  const p = scratch;
  p[len] = 0x80;
  const bitLen = len * 8;
  const hi = Math.floor(bitLen / 2 ** 32);
  const lo = bitLen >>> 0;
  p[total - 8] = hi >>> 24;
  p[total - 7] = (hi >>> 16) & 255;
  p[total - 6] = (hi >>> 8) & 255;
  p[total - 5] = hi & 255;
  p[total - 4] = lo >>> 24;
  p[total - 3] = (lo >>> 16) & 255;
  p[total - 2] = (lo >>> 8) & 255;
  p[total - 1] = lo & 255;
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) {
      const j = off + i * 4;
      W[i] = (p[j]! << 24) | (p[j + 1]! << 16) | (p[j + 2]! << 8) | p[j + 3]!;
    }
    compress();
  }
}

export function sha256(text: string): Uint8Array {
  digest(text);
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const v = H[i]!;
    out[i * 4] = v >>> 24;
    out[i * 4 + 1] = (v >>> 16) & 255;
    out[i * 4 + 2] = (v >>> 8) & 255;
    out[i * 4 + 3] = v & 255;
  }
  return out;
}

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const B32_CODES = Array.from(B32, ch => ch.charCodeAt(0));

/** The first `chars` characters of RFC 4648 base32 (Go's base32.StdEncoding). */
export function base32Prefix(bytes: Uint8Array, chars: number): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = ((value << 8) | b) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
      if (out.length === chars) return out;
    }
  }
  return out;
}

/** Base32 character codes of the digest in `H`: 16 characters (80 bits) cover the first two words and a half. */
const HC = new Int32Array(16);

function hashCodes(x: string, y = '', z = ''): void {
  digest(x, y, z);
  const c = B32_CODES;
  const h0 = H[0]!;
  const h1 = H[1]!;
  const h2 = H[2]!;
  HC[0] = c[(h0 >>> 27) & 31]!;
  HC[1] = c[(h0 >>> 22) & 31]!;
  HC[2] = c[(h0 >>> 17) & 31]!;
  HC[3] = c[(h0 >>> 12) & 31]!;
  HC[4] = c[(h0 >>> 7) & 31]!;
  HC[5] = c[(h0 >>> 2) & 31]!;
  HC[6] = c[((h0 << 3) | (h1 >>> 29)) & 31]!;
  HC[7] = c[(h1 >>> 24) & 31]!;
  HC[8] = c[(h1 >>> 19) & 31]!;
  HC[9] = c[(h1 >>> 14) & 31]!;
  HC[10] = c[(h1 >>> 9) & 31]!;
  HC[11] = c[(h1 >>> 4) & 31]!;
  HC[12] = c[((h1 << 1) | (h2 >>> 31)) & 31]!;
  HC[13] = c[(h2 >>> 26) & 31]!;
  HC[14] = c[(h2 >>> 21) & 31]!;
  HC[15] = c[(h2 >>> 16) & 31]!;
}

// One reusable argument list per prefix length: `prefix + hash` built as one flat string (a concatenation
// would leave a rope, flattened again by every Map lookup and rule built from it).
const nameCodes = new Map<number, number[]>();

/** `prefix` + the 16 characters in `HC`, as one flat string. */
function nameFromCodes(prefix: string): string {
  const n = prefix.length;
  let codes = nameCodes.get(n);
  if (!codes) nameCodes.set(n, (codes = new Array<number>(n + 16).fill(0)));
  for (let i = 0; i < n; i++) codes[i] = prefix.charCodeAt(i);
  for (let i = 0; i < 16; i++) codes[n + i] = HC[i]!;
  return String.fromCharCode.apply(null, codes);
}

/** `portProtoHash`: base32(sha256(servicePortName + protocol))[:16]. */
export function portProtoHash(servicePortName: string, protocol: string): string {
  hashCodes(servicePortName, protocol);
  return nameFromCodes('');
}

/** The first 8 characters of base32(sha256(text)) (nftables mode's `hashAndTruncate`). */
export function hash8(text: string): string {
  hashCodes(text);
  return String.fromCharCode(HC[0]!, HC[1]!, HC[2]!, HC[3]!, HC[4]!, HC[5]!, HC[6]!, HC[7]!);
}

export function serviceChainNames(
  servicePortName: string,
  protocol: string,
): { svc: string; svl: string; ext: string; fw: string } {
  hashCodes(servicePortName, protocol.toLowerCase());
  return {
    svc: nameFromCodes('KUBE-SVC-'),
    svl: nameFromCodes('KUBE-SVL-'),
    ext: nameFromCodes('KUBE-EXT-'),
    fw: nameFromCodes('KUBE-FW-'),
  };
}

/** `servicePortEndpointChainName`: endpoint is `ip:port` (`[v6]:port`). */
export function endpointChainName(servicePortName: string, protocol: string, endpoint: string): string {
  hashCodes(servicePortName, protocol.toLowerCase(), endpoint);
  return nameFromCodes('KUBE-SEP-');
}

/** sha256 as lowercase hex, for MetalLB's announcer election. */
export function sha256Hex(text: string): string {
  return [...sha256(text)].map(b => b.toString(16).padStart(2, '0')).join('');
}
