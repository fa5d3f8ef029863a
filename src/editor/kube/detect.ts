/**
 * Which YAML documents hold Kubernetes objects, and which files make up one cluster's manifests.
 *
 * Detection is a text test, run before anything is parsed: activation on every YAML file must stay cheap,
 * so a document counts as Kubernetes when some line is an `apiVersion:` and some line a `kind: <Kind>` (at
 * the top level, as a `kind: List` item, or as JSON keys). GitHub workflows, docker-compose files and Helm's
 * Chart.yaml (an `apiVersion` without a `kind`) do not pass.
 */

const API_VERSION = /^[ \t]*(?:-[ \t]+)?["']?apiVersion["']?[ \t]*:/m;
const KIND = /^[ \t]*(?:-[ \t]+)?["']?kind["']?[ \t]*:[ \t]*["']?[A-Z][A-Za-z0-9]*["']?[ \t]*,?[ \t]*(?:#.*)?$/m;

export function isKubernetesText(text: string): boolean {
  return API_VERSION.test(text) && KIND.test(text);
}

/** `/a/b/c.yaml` → `/a/b`; `/c.yaml` → `` (the root). Paths are URI paths: `/`-separated. */
export function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '' : path.slice(0, i);
}

/** Whether `path` is `dir` itself or lies below it. */
export function isUnder(path: string, dir: string): boolean {
  return dir === '' || path === dir || path.startsWith(`${dir}/`);
}

/**
 * The folder whose manifests describe the cluster a document belongs to: the document's own folder, widened
 * to each parent folder that itself holds Kubernetes manifests directly (a `kind-config.yaml` beside a
 * `services/` folder), never above `top` (the workspace folder). Everything under the result, recursively,
 * is read as one set of manifests — `packetlens synth <dir>` reads a directory the same way — so sibling
 * example clusters in one repository (examples/seed-002, examples/seed-003) stay apart.
 *
 * `kubeDirs` holds the folders that directly contain at least one Kubernetes YAML file.
 */
export function clusterRoot(documentPath: string, kubeDirs: ReadonlySet<string>, top: string): string {
  let root = dirOf(documentPath);
  if (!isUnder(root, top)) return root;
  while (root !== top) {
    const parent = dirOf(root);
    if (!isUnder(parent, top) || !kubeDirs.has(parent)) break;
    root = parent;
  }
  return root;
}

/** The distinct cluster folders of a workspace: the root of every Kubernetes file, minus roots nested in others. */
export function clusterRoots(kubeFiles: readonly string[], top: string): string[] {
  const dirs = new Set(kubeFiles.map(dirOf));
  const roots = [...new Set(kubeFiles.map(f => clusterRoot(f, dirs, top)))].sort();
  return roots.filter(r => !roots.some(o => o !== r && isUnder(r, o)));
}
