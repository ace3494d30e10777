/**
 * Reads a zod 4 schema's definition (`schema._zod.def`) without importing zod, so that
 * resolving settings loads zod only with the schemas themselves.
 */
import type { SettingsSchema } from "../kernel/settings-contract.ts";

/** The part of a zod definition the config layer reads; any of it may be missing. */
type ZodDef = { readonly type?: unknown; readonly innerType?: unknown; readonly in?: unknown; readonly element?: unknown };

function defOf(schema: unknown): ZodDef | undefined {
  if (typeof schema !== "object" || schema === null || !("_zod" in schema)) return undefined;
  const internals = schema._zod;
  if (typeof internals !== "object" || internals === null || !("def" in internals)) return undefined;
  const def = internals.def;
  return typeof def === "object" && def !== null ? def : undefined;
}

/** Definition types that wrap another schema. */
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "nonoptional", "readonly", "catch", "pipe"]);

/** The def under optional/nullable/default/pipe wrappers. */
export function baseDef(schema: unknown): ZodDef | undefined {
  let def = defOf(schema);
  while (def && typeof def.type === "string" && WRAPPERS.has(def.type)) {
    def = defOf(def.type === "pipe" ? def.in : def.innerType);
  }
  return def;
}

/** True for a zod 4 object schema (`z.object({...})` and its strict and loose forms). */
export function isZodObject(schema: unknown): schema is SettingsSchema {
  return typeof schema === "object" && schema !== null && "safeParse" in schema && typeof schema.safeParse === "function" && defOf(schema)?.type === "object";
}
