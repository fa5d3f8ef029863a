/**
 * A map of promises made on demand: one computation per key however many ask at once, forgotten when it
 * fails (the next ask tries again), optionally bounded (least recently made first out). The manifests'
 * file list, file texts, cluster roots and views, and the comparisons of two dumps are cached this way.
 */
export class PromiseCache<K, V> {
  private readonly entries = new Map<K, Promise<V>>();

  /** `max`: how many entries to keep (the oldest go first); no bound by default. */
  constructor(private readonly max = Infinity) {}

  /** The promise for `key`, made with `make` if there is none (a rejected one is forgotten). */
  get(key: K, make: () => Promise<V>): Promise<V> {
    let p = this.entries.get(key);
    if (p) return p;
    p = make();
    this.entries.set(key, p);
    p.catch(() => {
      if (this.entries.get(key) === p) this.entries.delete(key);
    });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as K);
    return p;
  }

  /** The promise for `key`, if one was made. */
  peek(key: K): Promise<V> | undefined {
    return this.entries.get(key);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
