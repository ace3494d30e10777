/**
 * What a settings schema allows, in words ("a whole number greater than 0"), read from the
 * JSON schema zod writes for it.
 */
import type { z } from "zod";
import type { SettingsSchema } from "../kernel/settings-contract.ts";

/** A JSON Schema node, as zod's `toJSONSchema` writes it. */
export type JsonSchema = z.core.JSONSchema.JSONSchema;

/** `value` when it is one schema node; a boolean schema or a tuple's list of items is none. */
function nodeOf(value: z.core.JSONSchema._JSONSchema | z.core.JSONSchema._JSONSchema[] | undefined): JsonSchema | null {
  return typeof value === "object" && !Array.isArray(value) ? value : null;
}

/** The JSON schema of a section (input side), or null when zod cannot write one. */
export function jsonSchemaOf(schema: SettingsSchema): JsonSchema | null {
  try {
    return schema.toJSONSchema({ io: "input", unrepresentable: "any" });
  } catch {
    return null;
  }
}

/** The node of `key` (a property, a list item, a mapping value) under `node`, or null. */
export function childSchema(node: JsonSchema | null | undefined, key: PropertyKey): JsonSchema | null {
  if (!node) return null;
  for (const branch of node.anyOf ?? node.oneOf ?? []) {
    const child = childSchema(branch, key);
    if (child) return child;
  }
  if (node.properties && typeof key === "string" && node.properties[key]) return nodeOf(node.properties[key]);
  if (typeof key === "number" && node.items) return nodeOf(node.items);
  return nodeOf(node.additionalProperties);
}

function bound(value: unknown): number | undefined {
  return typeof value === "number" && Math.abs(value) < Number.MAX_SAFE_INTEGER ? value : undefined;
}

function numberText(node: JsonSchema): string {
  const base = node.type === "integer" ? "a whole number" : "a number";
  const [min, max, above, below] = [bound(node.minimum), bound(node.maximum), bound(node.exclusiveMinimum), bound(node.exclusiveMaximum)];
  if (min !== undefined && max !== undefined) return `${base} from ${min} to ${max}`;
  const parts: string[] = [];
  if (above !== undefined) parts.push(`greater than ${above}`);
  else if (min !== undefined) parts.push(`of ${min} or more`);
  if (below !== undefined) parts.push(`less than ${below}`);
  else if (max !== undefined) parts.push(`of ${max} or less`);
  return parts.length === 0 ? base : `${base} ${parts.join(" and ")}`;
}

function stringText(node: JsonSchema): string {
  if (node.format === "uri" || node.format === "url") return "a URL";
  if (node.format === "email") return "an email address";
  if (node.format) return `a string in ${node.format} format`;
  if (node.pattern) return `a string matching /${node.pattern}/`;
  const { minLength: min, maxLength: max } = node;
  if (min !== undefined && max !== undefined) return `a string of ${min} to ${max} characters`;
  if (min === 1) return "a non-empty string";
  if (min !== undefined) return `a string of at least ${min} characters`;
  if (max !== undefined) return `a string of at most ${max} characters`;
  return "a string";
}

const PLURALS: Record<string, string> = { "a string": "strings", "a number": "numbers", "a whole number": "whole numbers", "true or false": "true/false values" };

/** What a JSON schema node allows, in words ("a whole number greater than 0"), or null. */
export function allowedText(node: JsonSchema | null | undefined): string | null {
  if (!node || typeof node !== "object") return null;
  const branches = node.anyOf ?? node.oneOf;
  if (branches) {
    const parts: string[] = [];
    for (const branch of branches) {
      if (branch.type === "null") continue;
      const text = allowedText(branch);
      if (text === null) return null;
      if (!parts.includes(text)) parts.push(text);
    }
    return parts.length > 0 ? parts.join(" or ") : null;
  }
  if (Array.isArray(node.enum)) return `one of ${node.enum.map((value) => (typeof value === "string" ? value : JSON.stringify(value))).join(", ")}`;
  if ("const" in node) return JSON.stringify(node.const);
  switch (node.type) {
    case "integer":
    case "number":
      return numberText(node);
    case "string":
      return stringText(node);
    case "boolean":
      return "true or false";
    case "array": {
      const item = allowedText(nodeOf(node.items));
      if (item === null) return "a list";
      return PLURALS[item] ? `a list of ${PLURALS[item]}` : `a list (each ${item})`;
    }
    case "object": {
      if (node.properties && Object.keys(node.properties).length > 0) return `a mapping with the keys ${Object.keys(node.properties).join(", ")}`;
      const value = allowedText(nodeOf(node.additionalProperties));
      return value && PLURALS[value] ? `a mapping of names to ${PLURALS[value]}` : "a mapping (key: value)";
    }
    default:
      return null;
  }
}
