// The subset of JSON Schema that Gemini's function declarations take, as
// bgjob's tests check it on what a client nobody on bgjob wrote received:
// one type a schema (no type list, anyOf, oneOf, allOf, not or $ref) and
// typed items in every array. Run as a program it reads a tools/list
// result from the file it is given and prints one line per finding.
import { readFileSync } from "node:fs";
import { argv } from "node:process";
import { fileURLToPath } from "node:url";

export function violations(schema, path) {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    return [`${path}: schema ${JSON.stringify(schema)} is not an object`];
  }
  const bad = [];
  for (const k of ["anyOf", "oneOf", "allOf", "not", "$ref", "$defs"]) {
    if (k in schema) bad.push(`${path}: ${k}`);
  }
  if (typeof schema.type !== "string") {
    bad.push(`${path}: type ${JSON.stringify(schema.type)}, want one type`);
    return bad;
  }
  if (schema.type === "array") {
    if (!("items" in schema)) bad.push(`${path}: an array without items`);
    else bad.push(...violations(schema.items, `${path}[]`));
  }
  if (schema.type === "object") {
    for (const [name, p] of Object.entries(schema.properties ?? {})) {
      bad.push(...violations(p, `${path}.${name}`));
    }
    if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
      bad.push(...violations(schema.additionalProperties, `${path}{}`));
    }
  }
  return bad;
}

// Output schemas are held to the same subset: strict validators warn of a
// type list there too.
export function toolViolations(tools) {
  return tools.flatMap((t) => [
    ...violations(t.inputSchema, t.name),
    ...(t.outputSchema ? violations(t.outputSchema, `${t.name} (output)`) : []),
  ]);
}

if (argv[1] === fileURLToPath(import.meta.url)) {
  const { tools } = JSON.parse(readFileSync(argv[2], "utf8"));
  for (const v of toolViolations(tools)) console.log(v);
}
