/**
 * Reads a zod 4 schema's definition (`schema._zod.def`) without importing zod, so that
 * resolving settings loads zod only with the schemas themselves.
 */
import type { SettingsSchema } from "../kernel/settings-contract.ts";

/** The part of a zod definition the config layer reads. */
type ZodDef = { type?: string; innerType?: unknown; in?: unknown; element?: unknown };

function defOf(schema: unknown): ZodDef | undefined {
  return (schema as { _zod?: { def?: ZodDef } } | null | undefined)?._zod?.def;
}

/** The def under optional/nullable/default/pipe wrappers. */
export function baseDef(schema: unknown): ZodDef | undefined {
  let def = defOf(schema);
  while (def && ["optional", "nullable", "default", "prefault", "nonoptional", "readonly", "catch", "pipe"].includes(def.type ?? "")) {
    def = defOf(def.type === "pipe" ? def.in : def.innerType);
  }
  return def;
}

/** True for a zod 4 object schema (`z.object({...})` and its strict and loose forms). */
export function isZodObject(schema: unknown): schema is SettingsSchema {
  return typeof (schema as { safeParse?: unknown } | null)?.safeParse === "function" && defOf(schema)?.type === "object";
}
