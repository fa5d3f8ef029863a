/**
 * Interface name patterns: `eth+` matches every name starting with `eth` (`ifname_compare` in ip_tables.c
 * compares the pattern's bytes up to its length, excluding the `+`).
 */
export function ifaceMatches(pattern: string, name: string): boolean {
  if (pattern.endsWith('+')) return name.startsWith(pattern.slice(0, -1));
  return pattern === name;
}
