/**
 * The memory bookkeeping of the manifests' worker (manifest-workspace.ts), which holds every cluster's view
 * in one worker (issue 12): which clusters it could not hold (it ran out of memory on them), so they are not
 * read again in a crash loop, and what each held view costs, so the least recently used ones are dropped
 * before one more cluster ends them all. No `vscode` here.
 */
import { isCancelled, isOutOfMemory } from '../worker/client.ts';

interface InFlight {
  label: string;
  reading: number;
  asking: number;
}

/**
 * Clusters the manifests' worker died on. A death while a cluster's manifests were being read, or a second
 * death while the same cluster was asked something (a trace, lenses), marks it failed until the manifests or
 * the limit change; a first death past the read lets it be read again (one hostile trace does not end it).
 */
export class ViewFailures {
  private readonly inFlight = new Map<string, InFlight>();
  private readonly deaths = new Map<string, number>();
  private readonly failures = new Map<string, Error>();

  /** Why the cluster at `root` is not read again, or undefined. */
  failed(root: string): Error | undefined {
    return this.failures.get(root);
  }

  /**
   * `work` for the cluster at `root` (`reading`: its manifests being read), counted while it runs; when the
   * worker died on that cluster, it fails with the failure's reason (naming the cluster and the limit).
   */
  track<T>(root: string, label: string, reading: boolean, work: Promise<T>): Promise<T> {
    let f = this.inFlight.get(root);
    if (!f) this.inFlight.set(root, (f = { label, reading: 0, asking: 0 }));
    const entry = f;
    if (reading) entry.reading++;
    else entry.asking++;
    const settle = () => {
      if (reading) entry.reading--;
      else entry.asking--;
      if (!entry.reading && !entry.asking && this.inFlight.get(root) === entry) this.inFlight.delete(root);
    };
    return work.then(
      v => {
        settle();
        return v;
      },
      (e: unknown) => {
        settle();
        throw isCancelled(e) ? e : (this.failures.get(root) ?? e);
      },
    );
  }

  /** The worker died unasked with `err`: the clusters this fails, each with the message to tell the user. */
  died(err: Error): Error[] {
    const out: Error[] = [];
    for (const [root, f] of this.inFlight) {
      if (this.failures.has(root)) continue;
      const deaths = (this.deaths.get(root) ?? 0) + 1;
      this.deaths.set(root, deaths);
      if (!f.reading && deaths < 2) continue;
      const failure = new Error(
        isOutOfMemory(err)
          ? `the manifests of ${f.label} need more than ${err.limitMb} MB of memory (the engine's limit, packetlens.limits.engineMemoryMB): Packet Lens stopped reading them until they change or the limit is raised`
          : `the manifests' worker stopped while it held ${f.label} (${err.message}); they are not read again until they change`,
      );
      this.failures.set(root, failure);
      out.push(failure);
    }
    // Every request of the dead worker fails: none is in flight any more.
    this.inFlight.clear();
    return out;
  }

  /** The manifests or the settings changed: every cluster may be read again. */
  clear(): void {
    this.failures.clear();
    this.deaths.clear();
  }
}

/** What each view the worker holds cost when it was read (bytes of heap) and when it was last asked. */
export class MemoryLedger {
  private clock = 0;
  private readonly views = new Map<string, { root: string; bytes: number; used: number }>();

  held(key: string, root: string, bytes: number): void {
    this.views.set(key, { root, bytes, used: ++this.clock });
  }

  used(key: string): void {
    const v = this.views.get(key);
    if (v) v.used = ++this.clock;
  }

  /**
   * The views to drop, least recently used first, until the worker's `heap` less what they cost is within
   * `budget`; never `keep` (the view just read). They are forgotten here.
   */
  toDrop(heap: number, budget: number, keep: string): { key: string; root: string }[] {
    const out: { key: string; root: string }[] = [];
    const order = [...this.views.entries()].filter(([k]) => k !== keep).sort((a, b) => a[1].used - b[1].used);
    for (const [key, v] of order) {
      if (heap <= budget) break;
      heap -= v.bytes;
      this.views.delete(key);
      out.push({ key, root: v.root });
    }
    return out;
  }

  clear(): void {
    this.views.clear();
  }
}
