/**
 * Which files are dumps, by name, and how a dump is named to the user — the one copy of the rules
 * package.json's language contribution states (`extensions`, `filenames`, `filenamePatterns`; checked by
 * test/editor/dump-files.test.ts), for the glue that has only a URI: the sides of a diff editor, the
 * workspace search of "Compare Packet Behaviour", the open dialogs.
 */

/** `*.rules`, `*.iptables`, `*.ipt`, `rules.v4`, `rules.v6`, `iptables-save*`, `ip6tables-save*`. */
const DUMP_NAME = /(\.(rules|iptables|ipt)$)|(^|\/)rules\.v[46]$|(^|\/)ip6?tables-save[^/]*$/i;

/** The same names as a `workspace.findFiles` glob. */
export const DUMP_GLOB = '**/{*.rules,*.iptables,*.ipt,rules.v4,rules.v6,iptables-save*,ip6tables-save*}';

/** nftables rulesets by name (package.json's `nftables` language: `.nft`, `nftables.conf`), for the same search. */
export const NFT_GLOB = '**/{*.nft,nftables.conf}';

/** The open dialog's filter: the names above, plus `.txt` (dumps are often saved as text). */
export const DUMP_DIALOG_FILTERS: Readonly<Record<string, string[]>> = {
  'iptables-save dumps': ['rules', 'iptables', 'ipt', 'v4', 'v6', 'txt'],
  'All files': ['*'],
};

/** Whether a path's name says it is a dump. */
export function isDumpPath(path: string): boolean {
  return DUMP_NAME.test(path);
}

/** The last segment of a path. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1) || path;
}

/** The parts of a URI `sideLabel` reads. */
export interface UriParts {
  readonly scheme: string;
  readonly path: string;
  readonly query: string;
}

/**
 * `node.rules`; for git's side of a working-tree diff `node.rules (HEAD)` / `(index)` / `(<ref>)` (the git
 * extension's `git:` URIs carry `{"ref": …}` as their query: `~` is HEAD, `''` the index); for any other
 * scheme `node.rules (<scheme>)`.
 */
export function sideLabel(uri: UriParts): string {
  const name = baseName(uri.path);
  if (uri.scheme === 'file' || uri.scheme === 'vscode-vfs' || uri.scheme === 'vscode-remote') return name;
  if (uri.scheme === 'git') {
    try {
      const ref = (JSON.parse(uri.query) as { ref?: unknown }).ref;
      if (typeof ref === 'string') return `${name} (${ref === '' ? 'index' : ref === '~' ? 'HEAD' : ref})`;
    } catch {
      // Not git's JSON query: the scheme names the side.
    }
  }
  return `${name} (${uri.scheme})`;
}
