/** Addresses in manifests read as kube-proxy reads them (a leaf module: build.ts and endpoints.ts use it). */
import { formatAddr, parseAddr } from '../../net/addr.ts';

/**
 * kube-proxy reads addresses with netutils.ParseIPSloppy / ParseCIDRSloppy, which accept leading zeros as
 * decimal (`172.30.0.041` is 172.30.0.41) and trims spaces; invalid ones are dropped (TestBadIPs).
 */
export function normalizeIP(text: string): string | null {
  if (canonicalIPv4(text)) return text;
  const a = parseAddr(text.trim());
  return a ? formatAddr(a) : null;
}

/** A dotted quad exactly as formatAddr writes it (no spaces, no leading zeros): nearly every address read. */
function canonicalIPv4(text: string): boolean {
  let parts = 0;
  let digits = 0;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || ++parts > 3) return false;
      digits = 0;
      value = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && value === 0) return false; // a leading zero
      value = value * 10 + (c - 48);
      if (++digits > 3 || value > 255) return false;
    } else return false;
  }
  return parts === 3 && digits > 0;
}

export function normalizeCIDR(text: string): string | null {
  const [addr, prefix] = text.trim().split('/');
  const a = addr ? parseAddr(addr) : null;
  if (!a || prefix === undefined || !/^\d+$/.test(prefix)) return null;
  const p = Number(prefix);
  if (p > (a.v === 4 ? 32 : 128)) return null;
  return `${formatAddr(a)}/${p}`;
}
