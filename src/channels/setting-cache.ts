/**
 * A cached read of a root setting for the channel hot paths: the admission policy is read
 * once per message and `stream_output` once per turn, and `Settings.getValue` allocates on
 * every call (about 0.3 µs). The answer stays exactly `getValue`'s; it is only remembered
 * for as long as `getValue` could not answer differently.
 */
import type { Settings } from "../kernel/settings.ts";

/** What a read of `key` depended on: the candidate sections up to the one that had the key. */
interface Entry {
  /** Section ids in `getValue`'s order, the answering one last. */
  readonly ids: string[];
  /** Their resolved values (the objects `settings.get(id)` returned) when the entry was made. */
  readonly resolved: unknown[];
  /** The answering section is named after the key: its whole value is the answer. */
  readonly whole: boolean;
}

/** After a read whose answer could not be pinned down, how many reads just ask `getValue`. */
const RETRY_EVERY = 64;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `settings.getValue(key, fallback)` for a key without dots, cached: one reader per key
 * (and per place that reads it), holding the answer for the last `Settings` it read.
 *
 * ```ts
 * const admission = new CachedRootSetting("admission", "concurrent");
 * admission.read(framework.settings); // "follow_up" with BUB_ADMISSION=follow_up
 * ```
 *
 * `getValue` answers from the first registered section, in registration order, that is the
 * root (`section: null`) and has the key, or is named after the key; sections whose schema
 * is not loaded are skipped. That answer depends only on the resolved values of those
 * sections up to the answering one, and `Settings` hands back the same resolved object for
 * a section until it is re-resolved (`reload()`, a new file or environment, or the section
 * registered again). So the cache remembers those objects and reads the key from the
 * answering one while `settings.get(id)` still returns them all; sections registered later
 * come after them and cannot change the answer. Nothing is cached while no section has
 * the key or an earlier candidate is not loaded yet: then every read is a `getValue`, so a
 * section loaded later is seen at once (pinning the answer down is retried every
 * {@link RETRY_EVERY} reads, since finding an unloaded section costs an exception).
 */
export class CachedRootSetting {
  readonly key: string;
  readonly fallback: unknown;
  #settings: Settings | null = null;
  #entry: Entry | null = null;
  /** Reads left before trying to pin the answer down again after a failed try. */
  #skip = 0;

  constructor(key: string, fallback: unknown) {
    if (key.includes(".")) throw new Error(`CachedRootSetting reads root keys only, not '${key}'`);
    this.key = key;
    this.fallback = fallback;
  }

  /** What `settings.getValue(key, fallback)` answers now. */
  read(settings: Settings): unknown {
    const entry = this.#entry;
    if (entry !== null && this.#settings === settings && isCurrent(settings, entry)) {
      const source = entry.resolved[entry.resolved.length - 1];
      if (entry.whole) return source;
      if (isRecord(source) && this.key in source) return source[this.key];
    }
    const value = settings.getValue(this.key, this.fallback);
    this.#settings = settings;
    if (this.#skip > 0) {
      this.#skip--;
      this.#entry = null;
      return value;
    }
    this.#entry = entryFor(settings, this.key, value);
    if (this.#entry === null) this.#skip = RETRY_EVERY;
    return value;
  }
}

function isCurrent(settings: Settings, entry: Entry): boolean {
  try {
    for (let index = 0; index < entry.ids.length; index++) if (settings.get(entry.ids[index]!) !== entry.resolved[index]) return false;
    return true;
  } catch {
    // The section was registered again and its schema is not loaded: getValue skips it now.
    return false;
  }
}

/** The sections `getValue` consulted for `key`, or null when its answer cannot be pinned down. */
function entryFor(settings: Settings, key: string, value: unknown): Entry | null {
  const ids: string[] = [];
  const resolved: unknown[] = [];
  for (const section of settings.sections) {
    if (section.section !== null && section.section !== key) continue;
    let current: unknown;
    try {
      current = settings.get(section.id);
    } catch {
      // Not loaded: getValue skipped it, but it may answer once loaded.
      return null;
    }
    ids.push(section.id);
    resolved.push(current);
    if (section.section === key) return current === value ? { ids, resolved, whole: true } : null;
    if (isRecord(current) && key in current) return current[key] === value ? { ids, resolved, whole: false } : null;
  }
  return null;
}
