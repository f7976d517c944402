// A bounded map that forgets its least recently used entry first. A Map iterates in insertion
// order, so re-inserting an entry on use keeps the oldest-used one first in line. Every bounded
// cache of the service is one of these: the bound is the only thing each chooses.
export class Lru<V> {
  readonly #entries = new Map<string, V>();
  constructor(readonly max: number) {}

  get(key: string): V | undefined {
    const v = this.#entries.get(key);
    if (v !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, v);
    }
    return v;
  }

  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    while (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value!);
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
