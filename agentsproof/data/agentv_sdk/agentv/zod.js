// A small schema library with zod's spelling, for the graders that validate their config
// with `z` from agentv's SDK: object, string, number, boolean, array, record, enum, literal,
// union, unknown/any, with optional / nullable / default / passthrough / extend, parse and
// safeParse. A value that does not fit throws a ZodError naming its path.

export class ZodError extends Error {
  constructor(issues) {
    super(issues.map((i) => `${i.path.length ? i.path.join('.') + ': ' : ''}${i.message}`).join('; '));
    this.name = 'ZodError';
    this.issues = issues;
  }
}

class Schema {
  constructor(check) {
    this._check = check; // (value, path) => value, throws ZodError
  }
  parse(value) {
    return this._check(value, []);
  }
  safeParse(value) {
    try {
      return { success: true, data: this.parse(value) };
    } catch (error) {
      if (error instanceof ZodError) return { success: false, error };
      throw error;
    }
  }
  async parseAsync(value) {
    return this.parse(value);
  }
  optional() {
    return this._wrap((v, p) => (v === undefined ? undefined : this._check(v, p)));
  }
  nullable() {
    return this._wrap((v, p) => (v === null ? null : this._check(v, p)));
  }
  nullish() {
    return this._wrap((v, p) => (v === null || v === undefined ? v : this._check(v, p)));
  }
  default(fallback) {
    return this._wrap((v, p) => (v === undefined ? (typeof fallback === 'function' ? fallback() : fallback) : this._check(v, p)));
  }
  describe() {
    return this;
  }
  refine(test, message) {
    const text = typeof message === 'string' ? message : message?.message ?? 'Invalid value';
    return this._wrap((v, p) => {
      const out = this._check(v, p);
      if (!test(out)) fail(p, text);
      return out;
    });
  }
  transform(fn) {
    return this._wrap((v, p) => fn(this._check(v, p)));
  }
  _wrap(check) {
    return new Schema(check);
  }
}

function fail(path, message) {
  throw new ZodError([{ path, message }]);
}

function kindOf(v) {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

class NumberSchema extends Schema {
  constructor(rules = []) {
    super((v, p) => {
      if (typeof v !== 'number' || Number.isNaN(v)) fail(p, `Expected number, received ${kindOf(v)}`);
      for (const [test, message] of rules) if (!test(v)) fail(p, message);
      return v;
    });
    this._rules = rules;
  }
  _more(test, message) {
    return new NumberSchema([...this._rules, [test, message]]);
  }
  min(n) {
    return this._more((v) => v >= n, `Number must be greater than or equal to ${n}`);
  }
  max(n) {
    return this._more((v) => v <= n, `Number must be less than or equal to ${n}`);
  }
  gt(n) {
    return this._more((v) => v > n, `Number must be greater than ${n}`);
  }
  lt(n) {
    return this._more((v) => v < n, `Number must be less than ${n}`);
  }
  int() {
    return this._more((v) => Number.isInteger(v), 'Expected integer, received float');
  }
  positive() {
    return this.gt(0);
  }
  nonnegative() {
    return this.min(0);
  }
}

class StringSchema extends Schema {
  constructor(rules = []) {
    super((v, p) => {
      if (typeof v !== 'string') fail(p, `Expected string, received ${kindOf(v)}`);
      for (const [test, message] of rules) if (!test(v)) fail(p, message);
      return v;
    });
    this._rules = rules;
  }
  min(n) {
    return new StringSchema([...this._rules, [(v) => v.length >= n, `String must contain at least ${n} character(s)`]]);
  }
  max(n) {
    return new StringSchema([...this._rules, [(v) => v.length <= n, `String must contain at most ${n} character(s)`]]);
  }
  regex(re) {
    return new StringSchema([...this._rules, [(v) => re.test(v), 'Invalid']]);
  }
}

class ArraySchema extends Schema {
  constructor(item, rules = []) {
    super((v, p) => {
      if (!Array.isArray(v)) fail(p, `Expected array, received ${kindOf(v)}`);
      for (const [test, message] of rules) if (!test(v)) fail(p, message);
      return v.map((x, i) => item._check(x, [...p, i]));
    });
    this._item = item;
    this._rules = rules;
  }
  min(n) {
    return new ArraySchema(this._item, [...this._rules, [(v) => v.length >= n, `Array must contain at least ${n} element(s)`]]);
  }
  max(n) {
    return new ArraySchema(this._item, [...this._rules, [(v) => v.length <= n, `Array must contain at most ${n} element(s)`]]);
  }
  nonempty() {
    return this.min(1);
  }
}

class ObjectSchema extends Schema {
  constructor(shape, keepUnknown = false) {
    super((v, p) => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(p, `Expected object, received ${kindOf(v)}`);
      const out = keepUnknown ? { ...v } : {};
      for (const [key, schema] of Object.entries(shape)) {
        const parsed = schema._check(v[key], [...p, key]);
        if (parsed !== undefined || key in v) out[key] = parsed;
      }
      return out;
    });
    this.shape = shape;
    this._keep = keepUnknown;
  }
  extend(more) {
    return new ObjectSchema({ ...this.shape, ...more }, this._keep);
  }
  merge(other) {
    return this.extend(other.shape);
  }
  passthrough() {
    return new ObjectSchema(this.shape, true);
  }
  strict() {
    return this;
  }
  partial() {
    return new ObjectSchema(Object.fromEntries(Object.entries(this.shape).map(([k, s]) => [k, s.optional()])), this._keep);
  }
}

function anything() {
  return new Schema((v) => v);
}

export const z = {
  string: () => new StringSchema(),
  number: () => new NumberSchema(),
  boolean: () =>
    new Schema((v, p) => {
      if (typeof v !== 'boolean') fail(p, `Expected boolean, received ${kindOf(v)}`);
      return v;
    }),
  array: (item) => new ArraySchema(item),
  object: (shape) => new ObjectSchema(shape),
  record: (a, b) => {
    const value = b ?? a;
    return new Schema((v, p) => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(p, `Expected object, received ${kindOf(v)}`);
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, value._check(x, [...p, k])]));
    });
  },
  enum: (values) =>
    new Schema((v, p) => {
      if (!values.includes(v)) fail(p, `Invalid enum value. Expected ${values.map((x) => `'${x}'`).join(' | ')}, received '${v}'`);
      return v;
    }),
  literal: (value) =>
    new Schema((v, p) => {
      if (v !== value) fail(p, `Invalid literal value, expected ${JSON.stringify(value)}`);
      return v;
    }),
  union: (options) =>
    new Schema((v, p) => {
      for (const option of options) {
        const got = option.safeParse(v);
        if (got.success) return got.data;
      }
      fail(p, 'Invalid input');
    }),
  discriminatedUnion: (_key, options) => z.union(options),
  unknown: anything,
  any: anything,
  null: () =>
    new Schema((v, p) => {
      if (v !== null) fail(p, `Expected null, received ${kindOf(v)}`);
      return v;
    }),
  ZodError,
};
