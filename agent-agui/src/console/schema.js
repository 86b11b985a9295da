// The console's check of an edited call: what is wrong with a value as arguments for a skill's
// input JSON Schema, each error naming where in the value (`keep[1].days must be integer`).
//
// It covers the part of JSON Schema (2020-12) that skills' schemas use, as schemars writes them:
// type (one or a list; integer is a whole number), enum, const; properties, required,
// patternProperties, additionalProperties (false or a schema); items, prefixItems, minItems,
// maxItems; minLength, maxLength (in code points); minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, multipleOf; pattern (a pattern that is not a valid regular expression is
// ignored); $ref to a JSON Pointer in the same schema (#/$defs/Name, #/definitions/Name, #);
// allOf, anyOf, oneOf, not; the schemas true and false. Other keywords (format, title,
// description, default, examples, …) are ignored. The check is bounded: a schema nested, or
// referring to itself, deeper than MAX_DEPTH is "too deep to check", and one that takes more than
// MAX_STEPS steps "too large to check", instead of hanging the page.
//
// The check is the page's, for the person editing; whatever is sent, the server parses the
// skill's input itself. Loaded by the page before console.js (window.eugeneSchema) and by node
// for its tests (module.exports).
"use strict";

(function (root) {
  const MAX_DEPTH = 64;
  const MAX_STEPS = 100000;

  // Thrown to stop a check that went past a bound; its text is the check's one error.
  class Limit {
    constructor(text) {
      this.text = text;
    }
  }

  const own = (object, key) => Object.prototype.hasOwnProperty.call(object, key);
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const isSchema = (s) => typeof s === "boolean" || isObject(s);
  const show = (v) => JSON.stringify(v);
  const plural = (n, word) => n + " " + word + (n === 1 ? "" : "s");

  function typeIs(value, type) {
    switch (type) {
      case "string": return typeof value === "string";
      case "integer": return Number.isInteger(value);
      case "number": return typeof value === "number" && Number.isFinite(value);
      case "boolean": return typeof value === "boolean";
      case "null": return value === null;
      case "array": return Array.isArray(value);
      case "object": return isObject(value);
      default: return true;
    }
  }

  // Whether two JSON values are equal (objects whatever the order of their keys).
  function same(a, b) {
    if (a === b) return true;
    if (Array.isArray(a)) {
      return Array.isArray(b) && a.length === b.length && a.every((v, i) => same(v, b[i]));
    }
    if (isObject(a) && isObject(b)) {
      const keys = Object.keys(a);
      return keys.length === Object.keys(b).length &&
        keys.every((k) => own(b, k) && same(a[k], b[k]));
    }
    return false;
  }

  // Where in the value: `items[2].name`; the root is "the arguments".
  function where(at) {
    if (at.length === 0) return "the arguments";
    let text = "";
    for (const step of at) {
      if (typeof step === "number") text += "[" + step + "]";
      else if (/^[A-Za-z_$][\w$]*$/.test(step)) text += (text ? "." : "") + step;
      else text += "[" + show(step) + "]";
    }
    return "`" + text + "`";
  }

  const samePlace = (a, b) => a.length === b.length && a.every((step, i) => step === b[i]);

  // An error at `at`. `expects` (types and values) marks a value refused for what it is, its
  // type or its value, not for something inside it: anyOf and oneOf merge those.
  const issue = (at, text, expects) => ({ at: at, text: text, expects: expects });

  // The schema `ref` points at in `whole`; undefined when it points at nothing.
  function resolve(ref, whole) {
    if (ref === "#") return whole;
    if (!ref.startsWith("#/")) return undefined;
    let node = whole;
    for (const raw of ref.slice(2).split("/")) {
      let step;
      try {
        step = decodeURIComponent(raw);
      } catch (error) {
        return undefined;
      }
      step = step.replace(/~1/g, "/").replace(/~0/g, "~");
      if (Array.isArray(node) && /^(0|[1-9][0-9]*)$/.test(step) && Number(step) < node.length) {
        node = node[Number(step)];
      } else if (isObject(node) && own(node, step)) {
        node = node[step];
      } else {
        return undefined;
      }
    }
    return isSchema(node) ? node : undefined;
  }

  // The schema's regular expression `pattern`, compiled once; null when it is not one.
  function regex(pattern, state) {
    if (!state.patterns.has(pattern)) {
      let compiled = null;
      for (const flags of ["u", ""]) {
        try {
          compiled = new RegExp(pattern, flags);
          break;
        } catch (error) {
          compiled = null;
        }
      }
      state.patterns.set(pattern, compiled);
    }
    return state.patterns.get(pattern);
  }

  function strings(value, schema, at, issues, state) {
    const length = [...value].length;
    if (typeof schema.minLength === "number" && length < schema.minLength) {
      issues.push(issue(at, "must be at least " + plural(schema.minLength, "character") + " long"));
    }
    if (typeof schema.maxLength === "number" && length > schema.maxLength) {
      issues.push(issue(at, "must be at most " + plural(schema.maxLength, "character") + " long"));
    }
    if (typeof schema.pattern === "string") {
      const compiled = regex(schema.pattern, state);
      if (compiled && !compiled.test(value)) {
        issues.push(issue(at, "must match the pattern " + show(schema.pattern)));
      }
    }
  }

  function numbers(value, schema, at, issues) {
    const bound = (key) => typeof schema[key] === "number";
    // Draft 4 wrote exclusiveMinimum: true beside minimum.
    const below = bound("minimum") && (schema.exclusiveMinimum === true
      ? value <= schema.minimum : value < schema.minimum);
    if (below) {
      const how = schema.exclusiveMinimum === true ? "greater than " : "at least ";
      issues.push(issue(at, "must be " + how + schema.minimum));
    }
    const above = bound("maximum") && (schema.exclusiveMaximum === true
      ? value >= schema.maximum : value > schema.maximum);
    if (above) {
      const how = schema.exclusiveMaximum === true ? "less than " : "at most ";
      issues.push(issue(at, "must be " + how + schema.maximum));
    }
    if (bound("exclusiveMinimum") && value <= schema.exclusiveMinimum) {
      issues.push(issue(at, "must be greater than " + schema.exclusiveMinimum));
    }
    if (bound("exclusiveMaximum") && value >= schema.exclusiveMaximum) {
      issues.push(issue(at, "must be less than " + schema.exclusiveMaximum));
    }
    if (bound("multipleOf") && schema.multipleOf > 0) {
      const times = value / schema.multipleOf;
      // 0.3 is 0.1 times 2.9999999999999996 in floating point.
      if (!(Math.abs(times - Math.round(times)) <= 1e-9 * Math.max(1, Math.abs(times)))) {
        issues.push(issue(at, "must be a multiple of " + schema.multipleOf));
      }
    }
  }

  function arrays(value, schema, at, depth, issues, state) {
    // 2020-12 writes a tuple as prefixItems and items; drafts before it as items and additionalItems.
    const tuple = Array.isArray(schema.items) ? schema.items
      : Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
    const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
    value.forEach((item, i) => {
      const each = i < tuple.length ? tuple[i] : rest;
      if (isSchema(each)) issues.push(...validate(item, each, at.concat(i), depth + 1, state));
    });
    if (typeof schema.minItems === "number" && value.length < schema.minItems) {
      issues.push(issue(at, "must have at least " + plural(schema.minItems, "item")));
    }
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
      issues.push(issue(at, "must have at most " + plural(schema.maxItems, "item")));
    }
  }

  function objects(value, schema, at, depth, issues, state) {
    const properties = isObject(schema.properties) ? schema.properties : {};
    const patterns = isObject(schema.patternProperties) ? schema.patternProperties : {};
    if (Array.isArray(schema.required)) {
      for (const name of schema.required) {
        if (typeof name === "string" && !own(value, name)) {
          issues.push(issue(at.concat(name), "is required"));
        }
      }
    }
    for (const name of Object.keys(value)) {
      const place = at.concat(name);
      let known = false;
      if (own(properties, name) && isSchema(properties[name])) {
        known = true;
        issues.push(...validate(value[name], properties[name], place, depth + 1, state));
      }
      for (const pattern of Object.keys(patterns)) {
        const compiled = regex(pattern, state);
        if (compiled && compiled.test(name) && isSchema(patterns[pattern])) {
          known = true;
          issues.push(...validate(value[name], patterns[pattern], place, depth + 1, state));
        }
      }
      if (known) continue;
      if (schema.additionalProperties === false) {
        issues.push(issue(place, at.length === 0 ? "is not an argument" : "is not allowed"));
      } else if (isObject(schema.additionalProperties)) {
        issues.push(...validate(value[name], schema.additionalProperties, place, depth + 1, state));
      }
    }
  }

  // What to say when none of `results` (one list of errors per alternative) accepts the value:
  // the errors of the alternative that accepted its shape and found fault inside it (the one with
  // the fewest, when several did); or, when every alternative refused the value itself, what it
  // may be ("must be one of "a", "b" or null").
  function closest(at, results) {
    const shallow = (issues) => issues.every((i) => i.expects && samePlace(i.at, at));
    const deep = results.filter((issues) => !shallow(issues));
    if (deep.length > 0) return deep.reduce((best, issues) => issues.length < best.length ? issues : best);
    const types = [];
    const values = [];
    for (const issues of results) {
      for (const i of issues) {
        for (const t of i.expects.types) if (!types.includes(t)) types.push(t);
        for (const v of i.expects.values) if (!values.some((known) => same(known, v))) values.push(v);
      }
    }
    const parts = [];
    if (values.length > 0) parts.push("one of " + values.map(show).join(", "));
    if (types.length > 0) parts.push(types.join(" or "));
    return [issue(at, "must be " + parts.join(" or "), { types: types, values: values })];
  }

  function combined(value, schema, at, depth, issues, state) {
    const each = (list) => list.filter(isSchema).map((s) => validate(value, s, at, depth + 1, state));
    if (Array.isArray(schema.allOf)) {
      for (const result of each(schema.allOf)) issues.push(...result);
    }
    if (Array.isArray(schema.anyOf)) {
      const results = each(schema.anyOf);
      if (results.length > 0 && !results.some((r) => r.length === 0)) {
        issues.push(...closest(at, results));
      }
    }
    if (Array.isArray(schema.oneOf)) {
      const results = each(schema.oneOf);
      const matched = results.filter((r) => r.length === 0).length;
      if (matched > 1) {
        issues.push(issue(at, "must match exactly one of the schema's alternatives (oneOf), not " + matched));
      } else if (matched === 0 && results.length > 0) {
        issues.push(...closest(at, results));
      }
    }
    if (isSchema(schema.not) && validate(value, schema.not, at, depth + 1, state).length === 0) {
      issues.push(issue(at, "must not match what the schema rules out (not)"));
    }
  }

  // The errors of `value`, found at `at`, against `schema`, `depth` schemas down from the root.
  function validate(value, schema, at, depth, state) {
    if (depth > MAX_DEPTH) throw new Limit("the schema is too deep to check");
    if (++state.steps > MAX_STEPS) throw new Limit("the schema is too large to check");
    if (schema === true) return [];
    if (schema === false) return [issue(at, "must not be given")];
    if (!isObject(schema)) return [];
    if (schema.type !== undefined) {
      const types = [].concat(schema.type).filter((t) => typeof t === "string");
      // A value of the wrong type: what else is wrong with it would only be noise.
      if (types.length > 0 && !types.some((t) => typeIs(value, t))) {
        return [issue(at, "must be " + types.join(" or "), { types: types, values: [] })];
      }
    }
    const issues = [];
    if (Array.isArray(schema.enum) && !schema.enum.some((v) => same(v, value))) {
      const text = "must be one of " + schema.enum.map(show).join(", ");
      issues.push(issue(at, text, { types: [], values: schema.enum }));
    }
    if (own(schema, "const") && !same(schema.const, value)) {
      issues.push(issue(at, "must be " + show(schema.const), { types: [], values: [schema.const] }));
    }
    if (typeof value === "string") strings(value, schema, at, issues, state);
    if (typeof value === "number") numbers(value, schema, at, issues);
    if (Array.isArray(value)) arrays(value, schema, at, depth, issues, state);
    if (isObject(value)) objects(value, schema, at, depth, issues, state);
    if (typeof schema.$ref === "string") {
      const target = resolve(schema.$ref, state.root);
      if (target === undefined) {
        const text = "cannot be checked: the schema refers to " + show(schema.$ref) +
          ", which it does not define";
        issues.push(issue(at, text));
      } else {
        issues.push(...validate(value, target, at, depth + 1, state));
      }
    }
    combined(value, schema, at, depth, issues, state);
    return issues;
  }

  // What is wrong with `value` as a call's arguments for the skill's input `schema`, one
  // sentence each; empty when nothing is. A schema that is missing (the server does not know the
  // skill's) checks only that the arguments are an object.
  function check(value, schema) {
    if (!isObject(value)) return ["the arguments must be a JSON object"];
    if (!isSchema(schema)) return [];
    const state = { root: schema, steps: 0, patterns: new Map() };
    let issues;
    try {
      issues = validate(value, schema, [], 0, state);
    } catch (error) {
      if (error instanceof Limit) return [error.text];
      // Whatever else went wrong, the edit is not sent unchecked.
      return ["the edit could not be checked: " + error];
    }
    const said = issues.map((i) => where(i.at) + " " + i.text);
    return said.filter((text, n) => said.indexOf(text) === n);
  }

  root.eugeneSchema = { check: check };
  if (typeof module === "object" && module.exports) module.exports = { check: check };
})(typeof window === "undefined" ? globalThis : window);
