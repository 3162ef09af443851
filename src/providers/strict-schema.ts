/**
 * Whether OpenAI's strict structured output takes a JSON Schema as it is: strict mode compiles the
 * schema into a grammar and answers 400 to one outside its subset, so a schema is sent strict only
 * when every object in it forbids other properties (`additionalProperties: false`) and requires
 * every property it names, and no keyword strict mode rejects appears. Any other schema is sent
 * non-strict: a guide the model follows, not a constraint (the answer is judged by rhema anyway).
 * Pure.
 */

/** Keywords strict mode does not take (OpenAI's "Supported schemas"). */
const UNSUPPORTED = new Set([
  "allOf", "oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "patternProperties",
  "propertyNames", "unevaluatedProperties", "unevaluatedItems", "minProperties", "maxProperties", "uniqueItems", "contains",
]);

/** True when `schema` can be sent with `strict: true` (see the header). */
export function isStrictSchema(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(isStrictSchema);
  if (schema === null || typeof schema !== "object") return true;
  const node = schema as Record<string, unknown>;
  if (Object.keys(node).some((key) => UNSUPPORTED.has(key))) return false;
  const properties = node.properties;
  const isObject = node.type === "object" || (Array.isArray(node.type) && node.type.includes("object")) || properties !== undefined;
  if (isObject) {
    if (node.additionalProperties !== false) return false;
    const names = properties !== null && typeof properties === "object" ? Object.keys(properties) : [];
    const required = Array.isArray(node.required) ? node.required : [];
    if (!names.every((name) => required.includes(name))) return false;
  }
  return Object.entries(node).every(([key, value]) => {
    // These hold schemas by name (a property may be called `if`); these hold data, not schemas.
    if (SCHEMAS_BY_NAME.has(key)) return value !== null && typeof value === "object" && Object.values(value).every(isStrictSchema);
    if (DATA.has(key)) return true;
    return isStrictSchema(value);
  });
}

const SCHEMAS_BY_NAME = new Set(["properties", "$defs", "definitions"]);
const DATA = new Set(["enum", "const", "default", "examples", "required", "description", "title"]);
