// The console's edit check (src/console/schema.js), run by node for tests/schema_check.rs: a
// table of cases, each a schema, a value and what the check must say (nothing, or an error
// containing a text). Prints a JSON summary ({"table": N, "ran": N, "failed": [...]}) and exits 1
// on any case that went otherwise.
"use strict";

const { check } = require("../src/console/schema.js");

// The input schema schemars writes for tests/support's delete_branch: an Option of an enum, an
// Option of a struct inlined whose field refers to itself through $defs, a Vec of a struct with a
// u32 (format uint32, minimum 0), additionalProperties false at the root.
const signOff = {
  type: "object",
  properties: {
    by: { type: "string", description: "Who." },
    after: { anyOf: [{ $ref: "#/$defs/SignOff" }, { type: "null" }] },
  },
  required: ["by"],
};
const branch = {
  type: "object",
  additionalProperties: false,
  properties: {
    name: { type: "string", description: "The branch." },
    mode: { type: ["string", "null"], enum: ["soft", "hard", null], description: "How." },
    sign_off: Object.assign({}, signOff, { type: ["object", "null"] }),
    keep: {
      type: "array",
      items: {
        type: "object",
        properties: {
          branch: { type: "string" },
          days: { type: "integer", format: "uint32", minimum: 0 },
        },
        required: ["branch", "days"],
      },
    },
  },
  required: ["name"],
  $defs: { SignOff: signOff },
};

// schemars for a struct field of another struct's type, not inlined: $ref beside $defs; for an
// enum whose variants have doc comments: oneOf of consts; for an enum with data: oneOf of objects.
const referred = {
  type: "object",
  properties: {
    scope: { $ref: "#/$defs/Scope" },
    depth: { $ref: "#/definitions/Depth" },
    shape: { $ref: "#/$defs/Shape" },
  },
  required: ["scope"],
  $defs: {
    Scope: {
      type: "object",
      properties: { dirs: { type: "array", items: { type: "string" } }, hidden: { type: "boolean" } },
      required: ["dirs"],
    },
    Shape: {
      oneOf: [
        { type: "object", properties: { circle: { type: "number" } }, required: ["circle"], additionalProperties: false },
        { type: "object", properties: { square: { type: "number" } }, required: ["square"], additionalProperties: false },
      ],
    },
  },
  definitions: {
    Depth: { oneOf: [{ type: "string", const: "shallow", description: "A look." }, { type: "string", const: "deep" }] },
  },
};

const obj = (properties, extra) => Object.assign({ type: "object", properties: properties }, extra || {});
const one = (name, schema, extra) => obj({ [name]: schema }, extra);

const VALID = null;
const cases = [
  // The skill's own schema, as the console gets it.
  ["delete_branch: the call as paused", branch, { name: "old" }, VALID],
  ["delete_branch: everything given", branch,
    { name: "x", mode: "hard", sign_off: { by: "ann", after: { by: "bob", after: null } }, keep: [{ branch: "main", days: 7 }] }, VALID],
  ["delete_branch: null for the options", branch, { name: "x", mode: null, sign_off: null }, VALID],
  ["delete_branch: a wrong enum value", branch, { name: "x", mode: "gentle" }, '`mode` must be one of "soft", "hard", null'],
  ["delete_branch: a nested struct without a required field (through $ref)", branch,
    { name: "x", sign_off: { by: "ann", after: {} } }, "`sign_off.after.by` is required"],
  ["delete_branch: three sign-offs deep, the last wrong", branch,
    { name: "x", sign_off: { by: "a", after: { by: "b", after: { by: 3 } } } }, "`sign_off.after.after.by` must be string"],
  ["delete_branch: a list item of the wrong type", branch,
    { name: "x", keep: [{ branch: "main", days: 7 }, { branch: "dev", days: "soon" }] }, "`keep[1].days` must be integer"],
  ["delete_branch: a list item that is not an object", branch, { name: "x", keep: ["main"] }, "`keep[0]` must be object"],
  ["delete_branch: a list item missing a field", branch, { name: "x", keep: [{ days: 1 }] }, "`keep[0].branch` is required"],
  ["delete_branch: uint32 below its minimum", branch, { name: "x", keep: [{ branch: "m", days: -1 }] }, "`keep[0].days` must be at least 0"],
  ["delete_branch: uint32 not whole", branch, { name: "x", keep: [{ branch: "m", days: 1.5 }] }, "`keep[0].days` must be integer"],
  ["delete_branch: an argument it does not take", branch, { name: "x", force: true }, "`force` is not an argument"],
  ["delete_branch: the name missing", branch, {}, "`name` is required"],
  ["delete_branch: the name of the wrong type", branch, { name: 5 }, "`name` must be string"],
  ["delete_branch: the options of the wrong type", branch, { name: "x", sign_off: "ann" }, "`sign_off` must be object or null"],
  ["the arguments must be an object", branch, [1], "the arguments must be a JSON object"],
  ["no schema: any object", null, { anything: 1 }, VALID],

  // $ref to $defs and definitions, oneOf.
  ["$ref: valid", referred, { scope: { dirs: ["src"] }, depth: "deep", shape: { circle: 1 } }, VALID],
  ["$ref: a required field inside", referred, { scope: {} }, "`scope.dirs` is required"],
  ["$ref: an item inside", referred, { scope: { dirs: ["a", 2] } }, "`scope.dirs[1]` must be string"],
  ["$ref to definitions: oneOf of consts", referred, { scope: { dirs: [] }, depth: "middle" }, '`depth` must be one of "shallow", "deep"'],
  ["oneOf of objects: the one whose shape fits", referred, { scope: { dirs: [] }, shape: { circle: "big" } }, "`shape.circle` must be number"],
  ["oneOf of objects: neither", referred, { scope: { dirs: [] }, shape: { triangle: 1 } }, "`shape.circle` is required"],
  ["oneOf matching two branches", one("n", { oneOf: [{ type: "integer" }, { minimum: 0 }] }), { n: 5 },
    "`n` must match exactly one of the schema's alternatives (oneOf), not 2"],
  ["oneOf matching one branch", one("n", { oneOf: [{ type: "integer" }, { minimum: 0 }] }), { n: -5 }, VALID],
  ["$ref chain", { $ref: "#/$defs/A", $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/C" }, C: one("x", { type: "boolean" }) } },
    { x: "yes" }, "`x` must be boolean"],
  ["$ref chain: valid", { $ref: "#/$defs/A", $defs: { A: { $ref: "#/$defs/B" }, B: one("x", { type: "boolean" }) } }, { x: true }, VALID],
  ["$ref with ~1 and ~0 escapes", { $ref: "#/$defs/a~1b~0c", $defs: { "a/b~c": one("x", { const: 1 }) } }, { x: 2 }, "`x` must be 1"],
  ["$ref with a percent escape", { $ref: "#/$defs/a%20b", $defs: { "a b": one("x", { type: "null" }) } }, { x: 0 }, "`x` must be null"],
  ["$ref into an array", { allOf: [{ $ref: "#/$defs/list/1" }], $defs: { list: [true, { required: ["q"] }] } }, {}, "`q` is required"],
  ["$ref cycle: # itself", { $ref: "#" }, {}, "the schema is too deep to check"],
  ["$ref cycle: defs referring to each other", { $ref: "#/$defs/a", $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } } },
    { x: 1 }, "the schema is too deep to check"],
  ["$ref cycle: branching", { $ref: "#/$defs/a", $defs: { a: { anyOf: [{ $ref: "#/$defs/a" }, { $ref: "#/$defs/a" }] } } },
    {}, "the schema is too deep to check"],
  ["a recursive schema on a finite value", one("next", { $ref: "#" }), { next: { next: { next: {} } } }, VALID],
  ["a recursive schema: the error deep down", one("next", { $ref: "#" }, { required: ["v"] }),
    { v: 1, next: { v: 1, next: {} } }, "`next.next.v` is required"],
  ["a recursive schema on a value deeper than the bound", one("n", { $ref: "#" }),
    JSON.parse('{"n":'.repeat(100) + "{}" + "}".repeat(100)), "the schema is too deep to check"],
  ["alternatives that multiply: stopped by the bound on steps",
    one("v", { $ref: "#/$defs/a" }, { $defs: { a: { anyOf: [{ items: { $ref: "#/$defs/a" } }, { items: { $ref: "#/$defs/a" } }, { type: "string" }] } } }),
    { v: JSON.parse("[".repeat(19) + "1" + "]".repeat(19)) }, "the schema is too large to check"],
  ["an unresolved $ref", one("x", { $ref: "#/$defs/Missing" }), { x: 1 },
    '`x` cannot be checked: the schema refers to "#/$defs/Missing", which it does not define'],
  ["a $ref to another document", one("x", { $ref: "other.json#/a" }), { x: 1 }, "which it does not define"],
  ["a $ref that is not a schema", { $ref: "#/$defs/n", $defs: { n: 3 } }, {}, "which it does not define"],

  // type.
  ["type: integer is a whole number", one("count", { type: "integer" }), { count: 2.5 }, "`count` must be integer"],
  ["type: 2.0 is an integer", one("count", { type: "integer" }), { count: 2.0 }, VALID],
  ["type: a list of types", one("v", { type: ["string", "null"] }), { v: 1 }, "`v` must be string or null"],
  ["type: a list of types, valid", one("v", { type: ["string", "null"] }), { v: null }, VALID],
  ["type: number", one("v", { type: "number" }), { v: "1" }, "`v` must be number"],
  ["type: array", one("v", { type: "array" }), { v: {} }, "`v` must be array"],
  ["type: object is not an array", one("v", { type: "object" }), { v: [] }, "`v` must be object"],

  // enum and const.
  ["enum", one("mode", { enum: ["fast", "slow"] }), { mode: "medium" }, '`mode` must be one of "fast", "slow"'],
  ["enum of objects, keys in another order", one("v", { enum: [{ a: 1, b: [2] }] }), { v: { b: [2], a: 1 } }, VALID],
  ["const", one("v", { const: "x" }), { v: "y" }, '`v` must be "x"'],
  ["const null", one("v", { const: null }), { v: null }, VALID],

  // properties, required, additionalProperties.
  ["additionalProperties: a schema", obj({}, { additionalProperties: { type: "integer" } }), { a: 1, b: "2" }, "`b` must be integer"],
  ["additionalProperties false, nested", one("o", obj({ a: true }, { additionalProperties: false })), { o: { a: 1, b: 2 } },
    "`o.b` is not allowed"],
  ["patternProperties count as known", obj({}, { patternProperties: { "^x-": { type: "string" } }, additionalProperties: false }),
    { "x-a": "1" }, VALID],
  ["patternProperties check their values", obj({}, { patternProperties: { "^x-": { type: "string" } } }), { "x-a": 1 }, '`["x-a"]` must be string'],
  ["a property named like Object's own", obj({ a: true }, { additionalProperties: false }), { constructor: 1 }, "`constructor` is not an argument"],
  ["required is a key present, even null", obj({}, { required: ["a"] }), { a: null }, VALID],

  // arrays.
  ["items", one("v", { items: { type: "string" } }), { v: ["a", 1] }, "`v[1]` must be string"],
  ["prefixItems then items", one("v", { prefixItems: [{ type: "string" }, { type: "integer" }], items: false }),
    { v: ["a", 1, true] }, "`v[2]` must not be given"],
  ["prefixItems: a wrong position", one("v", { prefixItems: [{ type: "string" }, { type: "integer" }] }), { v: ["a", "b"] },
    "`v[1]` must be integer"],
  ["minItems", one("v", { minItems: 2 }), { v: [1] }, "`v` must have at least 2 items"],
  ["maxItems", one("v", { maxItems: 1 }), { v: [1, 2] }, "`v` must have at most 1 item"],

  // strings.
  ["minLength counts code points", one("s", { minLength: 2 }), { s: "😀" }, "`s` must be at least 2 characters long"],
  ["maxLength counts code points", one("s", { maxLength: 2 }), { s: "😀😀" }, VALID],
  ["maxLength", one("s", { maxLength: 2 }), { s: "abc" }, "`s` must be at most 2 characters long"],
  ["pattern", one("s", { pattern: "^[a-z]+$" }), { s: "Abc" }, '`s` must match the pattern "^[a-z]+$"'],
  ["pattern is not anchored", one("s", { pattern: "b" }), { s: "abc" }, VALID],
  ["a bad pattern is ignored", one("s", { pattern: "([a-" }), { s: "anything" }, VALID],
  ["a bad pattern beside a good keyword", one("s", { pattern: "(", maxLength: 1 }), { s: "ab" }, "`s` must be at most 1 character long"],

  // numbers.
  ["minimum", one("n", { minimum: 1 }), { n: 0 }, "`n` must be at least 1"],
  ["maximum", one("n", { maximum: 1 }), { n: 2 }, "`n` must be at most 1"],
  ["exclusiveMinimum", one("n", { exclusiveMinimum: 0 }), { n: 0 }, "`n` must be greater than 0"],
  ["exclusiveMaximum", one("n", { exclusiveMaximum: 10 }), { n: 10 }, "`n` must be less than 10"],
  ["multipleOf", one("n", { multipleOf: 5 }), { n: 12 }, "`n` must be a multiple of 5"],
  ["multipleOf a fraction", one("n", { multipleOf: 0.1 }), { n: 0.3 }, VALID],

  // allOf, anyOf, not, boolean schemas.
  ["allOf", one("n", { allOf: [{ type: "integer" }, { minimum: 3 }] }), { n: 2 }, "`n` must be at least 3"],
  ["anyOf: none", one("n", { anyOf: [{ type: "string" }, { type: "boolean" }] }), { n: 1 }, "`n` must be string or boolean"],
  ["anyOf: one", one("n", { anyOf: [{ type: "string" }, { type: "integer" }] }), { n: 1 }, VALID],
  ["not", one("n", { not: { type: "string" } }), { n: "a" }, "`n` must not match what the schema rules out (not)"],
  ["not: valid", one("n", { not: { type: "string" } }), { n: 1 }, VALID],
  ["the schema true", true, { a: 1 }, VALID],
  ["the schema false", false, {}, "the arguments must not be given"],
  ["a property false", one("a", false), { a: 1 }, "`a` must not be given"],

  // Unknown keywords are ignored.
  ["unknown keywords", one("v", { format: "uint32", title: "V", default: 1, examples: [1], description: "d", "x-anything": {} }),
    { v: "not a number" }, VALID],
  ["a name that is not an identifier", obj({ "a b": { type: "string" } }), { "a b": 1 }, '`["a b"]` must be string'],
];

const failed = [];
let ran = 0;
for (const [name, schema, value, expected] of cases) {
  ran += 1;
  let errors;
  try {
    errors = check(value, schema);
  } catch (error) {
    failed.push({ name: name, threw: String(error && error.stack || error) });
    continue;
  }
  const ok = expected === VALID
    ? errors.length === 0
    : errors.some((e) => e.includes(expected));
  if (!ok) failed.push({ name: name, expected: expected === VALID ? "valid" : expected, got: errors });
}

console.log(JSON.stringify({ table: cases.length, ran: ran, failed: failed }));
process.exitCode = failed.length === 0 ? 0 : 1;
