/**
 * nftables AST expressions and statements back to text, as `nft list ruleset` writes them (close enough to
 * read: hovers quote them; nothing parses this text again).
 */
import type { NftExpr, NftStmt } from '../../engine/api.ts';

export function exprText(e: NftExpr): string {
  switch (e.kind) {
    case 'value':
      return typeof e.value === 'string' && /[\s"]/.test(e.value) ? `"${e.value}"` : String(e.value);
    case 'setref':
      return `@${e.name}`;
    case 'prefix':
      return `${exprText(e.addr)}/${e.len}`;
    case 'range':
      return `${exprText(e.low)}-${exprText(e.high)}`;
    case 'concat':
      return e.items.map(exprText).join(' . ');
    case 'set':
      return `{ ${e.items.map(exprText).join(', ')} }`;
    case 'list':
      return e.items.map(exprText).join(',');
    case 'elem':
      return `${exprText(e.value)}${e.timeout !== undefined ? ` timeout ${e.timeout}s` : ''}${e.comment !== undefined ? ` comment "${e.comment}"` : ''}`;
    case 'mapping':
      return `${exprText(e.key)} : ${exprText(e.data)}`;
    case 'payload':
      return `${e.protocol} ${e.field}`;
    case 'rawpayload':
      return `@${e.base},${e.offset},${e.len}`;
    case 'exthdr':
      return `${e.family} ${e.name}${e.field ? ` ${e.field}` : ''}`;
    case 'meta':
      return `meta ${e.key}`;
    case 'ct':
      return `ct${e.dir ? ` ${e.dir}` : ''}${e.family ? ` ${e.family}` : ''} ${e.key}`;
    case 'fib':
      return `fib ${e.flags.join(' . ')} ${e.result}`;
    case 'numgen':
      return `numgen ${e.mode} mod ${e.mod}${e.offset ? ` offset ${e.offset}` : ''}`;
    case 'hash':
      return `${e.mode}${e.expr ? ` ${exprText(e.expr)}` : ''} mod ${e.mod}${e.seed !== undefined ? ` seed ${e.seed}` : ''}${e.offset ? ` offset ${e.offset}` : ''}`;
    case 'rt':
      return `rt${e.family ? ` ${e.family}` : ''} ${e.key}`;
    case 'socket':
    case 'osf':
    case 'ipsec':
    case 'tunnel':
      return `${e.kind} ${e.key}`;
    case 'binop':
      return `${exprText(e.left)} ${e.op} ${exprText(e.right)}`;
    case 'map':
      return `${exprText(e.key)} map ${exprText(e.data)}`;
    case 'verdict':
      return e.target !== undefined ? `${e.verdict} ${e.target}` : e.verdict;
    case 'unknown':
      return e.text;
  }
}

export function stmtText(s: NftStmt): string {
  switch (s.kind) {
    case 'match': {
      const op = s.op === '==' || s.op === 'in' ? '' : ` ${s.op}`;
      return `${exprText(s.left)}${op} ${exprText(s.right)}`;
    }
    case 'verdict':
      return s.target !== undefined ? `${s.verdict} ${s.target}` : s.verdict;
    case 'reject':
      return `reject${s.type ? ` with ${s.type}${s.code ? ` ${s.code}` : ''}` : ''}`;
    case 'vmap':
      return `${exprText(s.key)} vmap ${exprText(s.data)}`;
    case 'counter':
      return s.ref ? `counter name ${exprText(s.ref)}` : 'counter';
    case 'mangle':
      return `${exprText(s.key)} set ${exprText(s.value)}`;
    case 'nat': {
      const to = s.addr || s.port ? ` to ${s.addr ? exprText(s.addr) : ''}${s.port ? `:${exprText(s.port)}` : ''}` : '';
      return `${s.type}${s.family ? ` ${s.family}` : ''}${to}${s.flags.length ? ` ${s.flags.join(',')}` : ''}`;
    }
    case 'log':
      return `log${s.prefix !== undefined ? ` prefix "${s.prefix}"` : ''}`;
    case 'limit':
      return `limit rate ${s.inv ? 'over ' : ''}${s.rate}/${s.per}`;
    case 'quota':
      return `quota ${s.inv ? 'over ' : ''}${s.value} ${s.unit}`;
    case 'queue':
      return 'queue';
    case 'setop':
      return `${s.op} @${s.set} { ${exprText(s.elem)} }`;
    case 'objref':
      return `${s.type} name ${exprText(s.ref)}`;
    case 'unknown':
      return s.text;
    default:
      return s.kind;
  }
}
