/**
 * The node's routing decision from its own tables (node context files, nodectx/): policy rules in priority
 * order (`fib_rules_lookup`), each table's longest matching prefix with the lowest metric first
 * (`fib_table_lookup`: the trie's longest prefix, aliases ordered by priority), `throw` and a rule's
 * `suppress_prefixlength` continuing with the next rule, and `blackhole`/`unreachable`/`prohibit` ending
 * the lookup. Without a local table in the files it is derived from the addresses, as `fib_add_ifaddr`
 * adds it; without rules, the kernel's defaults (0 local, 32766 main, 32767 default).
 */
import { type Addr, type Family, type Net, netContains, parseAddr, parseNet } from '../net/addr.ts';
import type { NodeContext, NodeRoute, NodeRule, RouteType } from '../nodectx/types.ts';
import { SCOPE_VALUE } from '../nodectx/types.ts';

export interface RouteQuery {
  readonly src?: Addr | null;
  readonly mark?: number;
  /** The incoming interface; null or absent for a packet the node sends (the kernel uses lo's index). */
  readonly inIface?: string | null;
}

export interface RouteResult {
  readonly type: RouteType;
  readonly dev: string | null;
  readonly gateway: Addr | null;
  readonly prefsrc: Addr | null;
  readonly table: string;
  readonly prefix: number;
  /** The route that decided (null when a rule's action did, e.g. `blackhole`). */
  readonly route: NodeRoute | null;
  readonly rule: NodeRule | null;
}

interface CompiledRoute {
  readonly net: Net;
  readonly route: NodeRoute;
  readonly gateway: Addr | null;
  readonly prefsrc: Addr | null;
}

interface CompiledRule {
  readonly rule: NodeRule;
  readonly src: Net | null;
  readonly dst: Net | null;
}

/** Upper bound on rules visited by one lookup (`goto` can loop in a hostile file). */
const MAX_RULE_STEPS = 10_000;

export class Routing {
  private readonly tables = new Map<string, CompiledRoute[]>();
  private readonly rules: { [F in Family]: CompiledRule[] } = { 4: [], 6: [] };
  private readonly families = new Set<Family>();

  constructor(ctx: NodeContext) {
    const hasLocal = new Set<Family>();
    for (const r of ctx.routes) {
      const net = parseNet(r.dst);
      if (!net) continue;
      if (r.table === 'main' || r.table === '254') this.families.add(r.family);
      if (r.table === 'local' || r.table === '255') hasLocal.add(r.family);
      this.add(r.table, {
        net,
        route: r,
        gateway: r.gateway ? parseAddr(r.gateway) : null,
        prefsrc: r.prefsrc ? parseAddr(r.prefsrc) : null,
      });
    }
    // The local table as fib_add_ifaddr / addrconf make it, when the files did not list it.
    for (const itf of ctx.interfaces)
      for (const a of itf.addrs) {
        if (hasLocal.has(a.family)) continue;
        const addr = parseAddr(a.local);
        const host = parseNet(`${a.local}/${a.family === 4 ? 32 : 128}`);
        if (!addr || !host) continue;
        const route: NodeRoute = {
          family: a.family,
          table: 'local',
          type: 'local',
          dst: `${a.local}/${a.family === 4 ? 32 : 128}`,
          dev: itf.name,
          gateway: null,
          prefsrc: a.local,
          metric: 0,
          scope: 'host',
          from: a.from,
        };
        this.add('local', { net: host, route, gateway: null, prefsrc: addr });
        // 127.0.0.1/8 on lo makes the whole 127.0.0.0/8 local.
        if (a.family === 4 && a.prefixlen < 32 && itf.name === 'lo') {
          const net = parseNet(`${a.local}/${a.prefixlen}`);
          if (net)
            this.add('local', {
              net,
              route: { ...route, dst: `${a.local}/${a.prefixlen}` },
              gateway: null,
              prefsrc: addr,
            });
        }
      }
    for (const list of this.tables.values())
      list.sort((a, b) => (b.net.prefix ?? 0) - (a.net.prefix ?? 0) || a.route.metric - b.route.metric);
    for (const f of [4, 6] as const) {
      const given = ctx.rules.filter(r => r.family === f);
      const rules: NodeRule[] = given.length
        ? [...given]
        : [0, 32766, 32767].map(priority => ({
            family: f,
            priority,
            not: false,
            src: null,
            dst: null,
            fwmark: null,
            fwmask: 0xffffffff,
            iif: null,
            oif: null,
            action: 'lookup' as const,
            table: priority === 0 ? 'local' : priority === 32766 ? 'main' : 'default',
            suppressPrefixlen: null,
            from: { file: '(kernel default rules)', line: 0 },
          }));
      rules.sort((a, b) => a.priority - b.priority);
      this.rules[f] = rules.map(rule => ({
        rule,
        src: rule.src ? parseNet(rule.src) : null,
        dst: rule.dst ? parseNet(rule.dst) : null,
      }));
    }
  }

  private add(table: string, r: CompiledRoute): void {
    const key = table === '254' ? 'main' : table === '255' ? 'local' : table === '253' ? 'default' : table;
    let list = this.tables.get(key);
    if (!list) this.tables.set(key, (list = []));
    list.push(r);
  }

  /** True when the files gave this family's main table: only then does the node route by them. */
  knows(family: Family): boolean {
    return this.families.has(family);
  }

  private ruleMatches(c: CompiledRule, dst: Addr, q: RouteQuery): boolean {
    const r = c.rule;
    let ok = true;
    if (c.src) ok &&= !!q.src && netContains(c.src, q.src);
    if (c.dst) ok &&= netContains(c.dst, dst);
    if (r.fwmark !== null) ok &&= ((q.mark ?? 0) & r.fwmask) >>> 0 === (r.fwmark & r.fwmask) >>> 0;
    // Locally generated packets are looked up with the loopback device as iif (ip_route_output_key_hash).
    if (r.iif !== null) ok &&= (q.inIface ?? 'lo') === r.iif;
    if (r.oif !== null) ok &&= false; // a socket bound to a device: not known for a trace
    return r.not ? !ok : ok;
  }

  /** The longest matching prefix of one table (lowest metric among equal prefixes). */
  private tableLookup(table: string, dst: Addr): CompiledRoute | null {
    const key = table === '254' ? 'main' : table === '255' ? 'local' : table === '253' ? 'default' : table;
    for (const r of this.tables.get(key) ?? []) {
      if (r.route.family !== dst.v || !netContains(r.net, dst)) continue;
      return r;
    }
    return null;
  }

  /** `fib_lookup`: null when no rule finds a route (ENETUNREACH). */
  lookup(dst: Addr, q: RouteQuery = {}): RouteResult | null {
    const rules = this.rules[dst.v];
    let steps = 0;
    for (let i = 0; i < rules.length && steps < MAX_RULE_STEPS; i++, steps++) {
      const c = rules[i]!;
      if (!this.ruleMatches(c, dst, q)) continue;
      const rule = c.rule;
      if (rule.action === 'nop') continue;
      if (rule.action === 'goto') {
        const target = Number(rule.table);
        const j = rules.findIndex(x => x.rule.priority >= target);
        if (j < 0) break;
        i = j - 1;
        continue;
      }
      if (rule.action !== 'lookup')
        return { type: rule.action, dev: null, gateway: null, prefsrc: null, table: '', prefix: 0, route: null, rule };
      const found = this.tableLookup(rule.table ?? 'main', dst);
      if (!found) continue;
      if (found.route.type === 'throw') continue;
      const prefix = found.net.prefix ?? 0;
      if (rule.suppressPrefixlen !== null && prefix <= rule.suppressPrefixlen) continue;
      return {
        type: found.route.type,
        dev: found.route.dev,
        gateway: found.gateway,
        prefsrc: found.prefsrc,
        table: found.route.table,
        prefix,
        route: found.route,
        rule,
      };
    }
    return null;
  }
}

/** An address's scope as a number (rt_scope_t), for inet_select_addr's `scope` comparisons. */
export function scopeValue(s: keyof typeof SCOPE_VALUE): number {
  return SCOPE_VALUE[s];
}
