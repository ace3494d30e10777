/** A min-heap of (due time, job id): the scheduler's one timer waits for its top. */
export interface Due {
  /** Epoch milliseconds. */
  readonly due: number;
  readonly id: string;
}

/** Entries ordered by due time (ties in any order). */
export class DueQueue {
  readonly #heap: Due[] = [];

  get size(): number {
    return this.#heap.length;
  }

  /** The earliest entry, or undefined when empty. */
  peek(): Due | undefined {
    return this.#heap[0];
  }

  push(entry: Due): void {
    const heap = this.#heap;
    heap.push(entry);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent].due <= entry.due) break;
      heap[index] = heap[parent];
      index = parent;
    }
    heap[index] = entry;
  }

  /** Removes and returns the earliest entry. */
  pop(): Due | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || last === undefined) return top;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right].due < heap[left].due ? right : left;
      if (heap[child].due >= last.due) break;
      heap[index] = heap[child];
      index = child;
    }
    heap[index] = last;
    return top;
  }

  clear(): void {
    this.#heap.length = 0;
  }
}
