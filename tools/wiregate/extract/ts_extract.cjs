// The JSON Schema of one exported TypeScript type, by ts-json-schema-generator's API.
// Run by wiregate.extract.typescript: node ts_extract.cjs NODE_MODULES REQUEST_JSON
// stdout: one JSON document, {"types": ..., "files": [...], "looked": [...]} or
// {"error": "...", "kind": "..."}.
"use strict";
const path = require("node:path");

function reply(document) {
  process.stdout.write(JSON.stringify(document));
}

// Whether the absolute path `name` is under the checkout `root`; a file of the checkout's
// own, not of a package installed there (node_modules).
const underRoot = (root, name) => name.startsWith(root + path.sep);
const isOwn = (root, name) => underRoot(root, name) && !name.includes(`${path.sep}node_modules${path.sep}`);

function firstLine(text) {
  return String(text).split("\n").find((line) => line.trim()) || String(text);
}

function main() {
  const [modules, requestText] = process.argv.slice(2);
  const request = JSON.parse(requestText);
  const ts = require(path.join(modules, "typescript"));
  const tsj = require(path.join(modules, "ts-json-schema-generator"));
  const config = {
    path: request.path,
    tsconfig: request.tsconfig || undefined,
    expose: "none", // referenced types inlined: the copy reads as one self-contained schema
    topRef: false,
    jsDoc: "extended", // @pattern, @minLength, @format ... are how TypeScript says them
    sortProps: true,
    strictTuples: true,
    additionalProperties: false, // an object literal of an interface type has its keys only
    // The governed checkout's dependencies are not installed (node:crypto, zod ...): their
    // unresolved imports must not fail the extraction; syntax errors still do (below).
    skipTypeCheck: true,
    encodeRefs: false,
  };
  const root = path.resolve(request.root);
  // Every path under the checkout the compiler looks at, found or not (module resolution's
  // candidates, a tsconfig's extends, node_modules): the cache entry depends on each, so a
  // file created where an import looked, or a declaration file edited, is a miss.
  const looked = new Set();
  for (const method of ["fileExists", "readFile", "directoryExists", "realpath"]) {
    const original = ts.sys[method];
    if (typeof original !== "function") continue;
    ts.sys[method] = function (name, ...rest) {
      const full = path.resolve(String(name));
      if (underRoot(root, full)) looked.add(full);
      return original.call(this, name, ...rest);
    };
  }
  let program;
  try {
    program = tsj.createProgram(config);
  } catch (error) {
    return reply({ kind: "compile", error: firstLine(error.message || error) });
  }
  const inside = program
    .getSourceFiles()
    .map((file) => path.resolve(file.fileName))
    .filter((name) => underRoot(root, name));
  for (const name of inside) looked.add(name);
  const files = inside.filter((name) => isOwn(root, name));
  const own = new Set(files); // looked up once per source file: thousands in a monorepo
  for (const file of program.getSourceFiles()) {
    if (!own.has(path.resolve(file.fileName))) continue;
    const diagnostics = program.getSyntacticDiagnostics(file);
    if (diagnostics.length) {
      const d = diagnostics[0];
      const { line } = file.getLineAndCharacterOfPosition(d.start || 0);
      const text = ts.flattenDiagnosticMessageText(d.messageText, " ");
      return reply({
        kind: "compile",
        error: `${path.relative(root, file.fileName)}:${line + 1}: TS${d.code}: ${text}`,
      });
    }
  }
  const checker = program.getTypeChecker();
  const refusals = new Refusals(root);
  // Not among ts-json-schema-generator's exports: the type of a `new () => T`.
  const typeModule = path.join(modules, "ts-json-schema-generator", "dist", "src", "Type", "ConstructorType.js");
  // The generator's types of references to a function type it reads as an object (a callable
  // interface, the lib's `Function`): a value of one is a function.
  const callables = new WeakSet();
  jsonMembers(ts, tsj, require(typeModule).ConstructorType, callables, program, checker, refusals);
  mergeDeclarations(ts, tsj, checker);
  const source = program.getSourceFile(path.resolve(request.root, request.path));
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  const exported = new Map(
    (moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : []).map((s) => [s.name, s]),
  );
  const newGenerator = () =>
    new tsj.SchemaGenerator(
      program,
      tsj.createParser(program, config, (chain) => refuseInexact(ts, tsj, program, chain, refusals, callables)),
      tsj.createFormatter(config),
      config,
    );
  let generator = newGenerator();
  // Null prototype: a type named __proto__ is a key like any other.
  const types = Object.create(null);
  for (const name of request.types) {
    types[name] = extract(ts, checker, generator, exported, name, root);
    // A type that failed halfway leaves the generator's caches holding what it began (a
    // recursive type's reference never set): the next type would fail on it.
    if (types[name].error) generator = newGenerator();
  }
  const relative = (names) => [...names].map((name) => path.relative(root, name)).sort();
  reply({ types, files: relative(files), looked: relative(looked) });
}

// The members of an interface, class or type literal as JSON.stringify writes a value of it:
// its own enumerable data properties, each once. A class's `private` and `protected` fields
// are such properties (TypeScript checks them, JavaScript has no notion of them), an ES
// private `#field` is not; static members, methods and accessors live elsewhere than the
// value (the class, its prototype). A member holding a function is omitted as JSON.stringify
// omits it, and `void` is `undefined`: absent.
function jsonMembers(ts, tsj, ConstructorType, callables, program, checker, refusals) {
  const modified = (node, kind) => (ts.getModifiers(node) || []).some((m) => m.kind === kind);
  const declared = (node) => {
    const found = [];
    for (const member of node.members) {
      if (ts.isConstructorDeclaration(member)) {
        found.push(...member.parameters.filter((p) => ts.isParameterPropertyDeclaration(p, member)));
      } else if (ts.isPropertySignature(member) || ts.isPropertyDeclaration(member)) {
        if (ts.isPrivateIdentifier(member.name) || modified(member, ts.SyntaxKind.StaticKeyword)) continue;
        // `accessor x = 1`: a getter and setter on the prototype, the value in a private field.
        if (modified(member, ts.SyntaxKind.AccessorKeyword)) continue;
        found.push(member);
      } else if (!ts.isClassLike(node) && ts.isGetAccessorDeclaration(member)) {
        // An interface's or type literal's `get x(): T` is a property read as a T: a data
        // property, or an object literal's getter, its own key too. (A class's is on the
        // prototype.)
        found.push(member);
      } else if (!ts.isClassLike(node) && ts.isSetAccessorDeclaration(member)) {
        const symbol = checker.getSymbolAtLocation(member.name);
        if (!((symbol && symbol.declarations) || []).some(ts.isGetAccessorDeclaration)) {
          throw refusals.error("a set accessor without a get accessor (a data property is written, a setter alone not)", member);
        }
      }
    }
    return found.filter((member) => !tsj.isNodeHidden(member));
  };
  // A member that may hold a function: JSON.stringify omits it, as it omits undefined, and
  // writes a null. So one holding only functions (or undefined) is absent, one holding null
  // too is an optional null, and one holding other data is refused.
  const functionOr = (types, isFunction, isNull, place) => {
    if (!types.some(isFunction)) return undefined;
    const rest = types.filter((t) => !isFunction(t));
    if (!rest.length) return null;
    if (rest.every(isNull)) return new tsj.NullType();
    throw refusals.error("a property holding a function or data (JSON.stringify omits the function)", place);
  };
  const callable = (t) => isFunctionType(ts, program, checker, t);
  const checked = (member) => {
    const type = checker.getTypeAtLocation(member);
    const types = (type.isUnion() ? type.types : [type]).filter((t) => !(t.flags & ts.TypeFlags.Undefined));
    return functionOr(types, callable, (t) => t.flags & ts.TypeFlags.Null, member);
  };
  const absent = (type) => {
    const bare = tsj.derefType(type);
    if (bare instanceof tsj.VoidType) return tsj.preserveAnnotation(type, new tsj.UndefinedType());
    if (bare instanceof tsj.UnionType && bare.getTypes().some((t) => tsj.derefType(t) instanceof tsj.VoidType)) {
      return tsj.preserveAnnotation(type, new tsj.UnionType(bare.getTypes().map(absent)));
    }
    return type;
  };
  const isFunction = (type) => {
    const bare = tsj.derefType(type);
    return bare instanceof tsj.FunctionType || bare instanceof ConstructorType || callables.has(bare);
  };
  const isNull = (type) => tsj.derefType(type) instanceof tsj.NullType;
  // A value's type with `void` read as undefined, its members (itself when no union) and
  // those of them that are not undefined, with what a function among them makes of it.
  const defined = (type, place) => {
    type = absent(type);
    const bare = tsj.derefType(type);
    const all = bare instanceof tsj.UnionType ? bare.getTypes() : [bare];
    const types = all.filter((t) => !(tsj.derefType(t) instanceof tsj.UndefinedType));
    return { type, bare, all, types, held: functionOr(types, isFunction, isNull, place) };
  };
  // One property as JSON.stringify writes it (null: it writes none), or refused at `place`.
  const written = (name, type, required, place) => {
    if (name === "__proto__") {
      // JSON.parse makes `"__proto__"` an own property and JSON.stringify writes it back,
      // but an object literal `{ __proto__: x }` sets the prototype instead and has no
      // such key: whether the JSON holds it depends on how the value was built.
      throw refusals.error("a property named __proto__ (an object literal sets the prototype instead)", place);
    }
    const { type: value, bare, held } = defined(type, place);
    if (held !== undefined) return held && new tsj.ObjectProperty(name, held, false);
    if (bare instanceof tsj.NeverType) {
      // An optional never is absent. A required one leaves the type no value at all: a
      // schema matching nothing would read as every record broken, not as this member.
      if (required) throw refusals.error("a required property of type never (no value has it)", place);
      return null;
    }
    return new tsj.ObjectProperty(name, value, required);
  };
  // An index signature's value (`[k: string]: T`, Record<string, T>) as JSON.stringify writes
  // it: it writes no key holding undefined or a function, by the rule of a property. What is
  // left is the value; nothing left, no key at all.
  const valueOf = (type, place) => {
    const { type: value, all, types, held } = defined(type, place);
    if (held !== undefined) return held || false;
    if (!types.length) return false;
    if (types.length === all.length) return value;
    return tsj.preserveAnnotation(value, types.length === 1 ? types[0] : new tsj.UnionType(types));
  };
  const indexed = (additional, place) => (additional instanceof tsj.BaseType ? valueOf(additional, place) : additional);
  const getProperties = function (node, context) {
    const properties = [];
    for (const member of declared(node)) {
      // Seen by the checker first: a callable interface is an object to the generator, and
      // an untyped field's inferred function type a node it cannot parse.
      const held = checked(member);
      if (held !== undefined) {
        if (held) properties.push(written(this.getPropertyName(member.name), held, false, member));
        continue;
      }
      let typeNode = member.type;
      if (!typeNode && (member.initializer || ts.isGetAccessorDeclaration(member))) {
        typeNode = checker.typeToTypeNode(checker.getTypeAtLocation(member), node, ts.NodeBuilderFlags.NoTruncation);
      }
      if (!typeNode) continue;
      const type = this.childNodeParser.createType(typeNode, context);
      const property = written(this.getPropertyName(member.name), type, !member.questionToken, member);
      if (property) properties.push(property);
    }
    return properties;
  };
  // A getter's JSDoc (@minLength ...) says what its property holds, as a property's does.
  const annotated = tsj.AnnotatedNodeParser.prototype;
  const { getAnnotatedNode } = annotated;
  annotated.getAnnotatedNode = function (node) {
    const parent = node.parent;
    return parent && ts.isGetAccessorDeclaration(parent) && parent.type === node ? parent : getAnnotatedNode.call(this, node);
  };
  // A mapped type's properties (Record<K, T>, Partial<T> ...), optional as TypeScript reads
  // them: `?` and `+?` make each optional, `-?` required (the generator read any modifier as
  // `?`), none keeps the optionality of the property of the type whose keys they are.
  const mapped = tsj.MappedTypeNodeParser.prototype;
  // The type whose keys a mapped type's are (`keyof T`, or a K extends keyof T as Pick's),
  // which TypeScript takes its properties' optionality from; null when it has none.
  const modifiersOf = (parser, node, context) => {
    let keys = node.typeParameter.constraint;
    if (keys && ts.isTypeReferenceNode(keys)) {
      const symbol = checker.getSymbolAtLocation(keys.typeName);
      const [declaration] = (symbol && symbol.flags & ts.SymbolFlags.TypeParameter && symbol.declarations) || [];
      if (declaration && declaration.constraint) keys = declaration.constraint;
    }
    if (!keys || !ts.isTypeOperatorNode(keys) || keys.operator !== ts.SyntaxKind.KeyOfKeyword) return null;
    return parser.childNodeParser.createType(keys.type, context);
  };
  // Whether `name` is an optional property of `type`; undefined when that cannot be told.
  const optionalIn = (type, name) => {
    type = tsj.derefType(type);
    if (type instanceof tsj.ObjectType) {
      const own = type.getProperties().find((p) => p.getName() === name);
      if (own) return !own.isRequired();
      for (const base of type.getBaseTypes()) {
        const found = optionalIn(base, name);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    if (type instanceof tsj.IntersectionType) {
      // Optional in an intersection when optional in every member declaring it.
      const found = type.getTypes().map((t) => optionalIn(t, name)).filter((t) => t !== undefined);
      return found.length ? found.every(Boolean) : undefined;
    }
    return undefined;
  };
  const modifier = (node) => node.questionToken && node.questionToken.kind;
  mapped.getProperties = function (node, keyListType, context) {
    const source = modifiersOf(this, node, context);
    return tsj
      .uniqueTypeArray(keyListType.getFlattenedTypes(tsj.derefType))
      .filter((key) => key instanceof tsj.LiteralType)
      .map((key) => [key, this.mapKey(node, key, context)])
      .filter(([, name]) => name instanceof tsj.LiteralType)
      .map(([key, mappedKey]) => {
        const name = mappedKey.getValue().toString();
        const type = this.childNodeParser.createType(node.type, this.createSubContext(node, key, context));
        const bare = tsj.derefAnnotatedType(type);
        const { newType, numRemoved } = bare instanceof tsj.UnionType ? tsj.removeUndefined(bare) : { newType: bare, numRemoved: 0 };
        const defined = tsj.preserveAnnotation(type, newType);
        const optional = source ? optionalIn(source, name) : false;
        if (modifier(node) !== ts.SyntaxKind.MinusToken) {
          return new tsj.ObjectProperty(name, defined, !modifier(node) && !numRemoved && !optional);
        }
        // `-?` drops the undefined of an optional source property; another's stays (absent).
        if (optional === undefined && numRemoved) {
          throw refusals.error("a mapped type's -? over a type whose optional properties are not known", node);
        }
        return new tsj.ObjectProperty(name, optional ? defined : type, true);
      });
  };
  const { getValues } = mapped;
  mapped.getValues = function (node, ...rest) {
    const required = modifier(node) !== ts.SyntaxKind.QuestionToken && modifier(node) !== ts.SyntaxKind.PlusToken;
    return getValues.call(this, node, ...rest).map((p) => new tsj.ObjectProperty(p.getName(), p.getType(), required));
  };
  for (const method of ["getProperties", "getValues"]) {
    const original = mapped[method];
    mapped[method] = function (node, ...rest) {
      const properties = original.call(this, node, ...rest);
      return properties.map((p) => written(p.getName(), p.getType(), p.isRequired(), node)).filter(Boolean);
    };
  }
  // An array's or tuple's element JSON.stringify writes as null where the value is undefined
  // (`void`) or a function. An optional tuple element may hold undefined too, unless
  // exactOptionalPropertyTypes says it may not.
  const element = (type) => {
    const bare = tsj.derefType(type);
    if (bare instanceof tsj.UndefinedType || bare instanceof tsj.VoidType || isFunction(bare)) {
      return tsj.preserveAnnotation(type, new tsj.NullType());
    }
    if (!(bare instanceof tsj.UnionType)) return type;
    const members = bare.getTypes().map(element);
    if (members.every((member, i) => member === bare.getTypes()[i])) return type;
    return tsj.preserveAnnotation(type, new tsj.UnionType(members));
  };
  // `[a: string, b?: number]`: a named element's `?` makes it optional as `number?` does
  // (the generator read the element as required).
  const tuples = tsj.TupleNodeParser.prototype;
  const { createType: createTuple } = tuples;
  tuples.createType = function (node, context) {
    const types = createTuple.call(this, node, context).getTypes();
    const optional = (item, i) => ts.isNamedTupleMember(item) && item.questionToken && types[i];
    return new tsj.TupleType(types.map((t, i) => (optional(node.elements[i], i) ? new tsj.OptionalType(t) : t)));
  };
  const exact = program.getCompilerOptions().exactOptionalPropertyTypes;
  const slot = (type) => {
    if (type instanceof tsj.RestType) return type; // an array: its elements are read below
    if (!(type instanceof tsj.OptionalType)) return element(type);
    const inner = type.getType(); // a named element's title kept outside the union
    const held = exact ? inner : tsj.preserveAnnotation(inner, new tsj.UnionType([tsj.derefAnnotatedType(inner), new tsj.UndefinedType()]));
    return new tsj.OptionalType(element(held));
  };
  for (const method of ["getDefinition", "getChildren"]) {
    const arrays = tsj.ArrayTypeFormatter.prototype;
    const array = arrays[method];
    arrays[method] = function (type) {
      return array.call(this, new tsj.ArrayType(element(type.getItem())));
    };
    const tuples = tsj.TupleTypeFormatter.prototype;
    const tuple = tuples[method];
    tuples[method] = function (type) {
      return tuple.call(this, new tsj.TupleType(type.getTypes().map((t) => t && slot(t))));
    };
  }
  // Record<string, T> and the like: an object whose keys all hold a T.
  const { createType: createMapped } = mapped;
  mapped.createType = function (node, context) {
    const type = createMapped.call(this, node, context);
    const object = tsj.derefAnnotatedType(type);
    if (!(object instanceof tsj.ObjectType)) return type;
    const additional = indexed(object.getAdditionalProperties(), node);
    if (additional === object.getAdditionalProperties()) return type;
    const [id, bases, properties] = [object.getId(), object.getBaseTypes(), object.getProperties()];
    const rebuilt = new tsj.ObjectType(id, bases, properties, additional, object.getNonPrimitive());
    return tsj.preserveAnnotation(type, rebuilt);
  };
  // JSON.stringify writes what a value's toJSON() returns, and calls it once: the value it
  // returns is written as it is, whatever toJSON that one has.
  const toJSON = (node) => {
    const symbol = node.name && checker.getSymbolAtLocation(node.name);
    const type = symbol ? checker.getDeclaredTypeOfSymbol(symbol) : checker.getTypeAtLocation(node);
    const method = type && checker.getPropertyOfType(type, "toJSON");
    if (!method) return null;
    const declarations = method.declarations || [];
    const [declaration] = declarations;
    const value = declaration && checker.getTypeOfSymbolAtLocation(method, declaration);
    if (value && !checker.getNonNullableType(value).getCallSignatures().length) return null; // data
    const signature = declaration && (ts.isMethodSignature(declaration) || ts.isMethodDeclaration(declaration))
      ? declaration
      : declaration && declaration.type && ts.isFunctionTypeNode(declaration.type) ? declaration.type : null;
    const writes = "JSON.stringify writes what it returns";
    if (!signature || declarations.length > 1 || !signature.type) {
      throw refusals.error(`a toJSON() without one written return type (${writes})`, declaration || node);
    }
    if (method.flags & ts.SymbolFlags.Optional) {
      throw refusals.error(`an optional toJSON() (${writes} when there is one)`, declaration);
    }
    const owner = declaration.parent;
    if (owner !== node && owner.typeParameters && owner.typeParameters.length) {
      throw refusals.error(`a toJSON() inherited from a generic type (${writes})`, declaration);
    }
    if (checker.getPropertyOfType(checker.getTypeFromTypeNode(signature.type), "toJSON")) {
      throw refusals.error("a toJSON() returning a value with its own toJSON() (JSON.stringify calls one)", declaration);
    }
    return signature.type;
  };
  for (const parser of [tsj.TypeLiteralNodeParser, tsj.InterfaceAndClassNodeParser]) {
    const { createType } = parser.prototype;
    parser.prototype.createType = function (node, context, reference) {
      const returned = toJSON(node);
      if (returned) return this.childNodeParser.createType(returned, context, reference);
      return createType.call(this, node, context, reference);
    };
    parser.prototype.getProperties = getProperties;
    const { getAdditionalProperties } = parser.prototype;
    parser.prototype.getAdditionalProperties = function (node, context) {
      const signature = node.members.find(ts.isIndexSignatureDeclaration);
      return indexed(getAdditionalProperties.call(this, node, context), signature || node);
    };
  }
}

// An interface declared more than once (declaration merging, a `declare module` augmentation
// in a file the program reads) is one type to TypeScript, but ts-json-schema-generator reads
// the members of the one declaration it is given: read those of every declaration instead.
function mergeDeclarations(ts, tsj, checker) {
  const parser = tsj.InterfaceAndClassNodeParser.prototype;
  const all = (node) => {
    const symbol = node.name && checker.getSymbolAtLocation(node.name);
    const found = ((symbol && symbol.declarations) || []).filter(
      (d) => ts.isInterfaceDeclaration(d) || ts.isClassDeclaration(d),
    );
    return found.length > 1 ? found : [node];
  };
  const { getProperties, getBaseTypes, getAdditionalProperties } = parser;
  parser.getProperties = function (node, context) {
    const merged = new Map();
    for (const declaration of all(node)) {
      for (const property of getProperties.call(this, declaration, context)) {
        if (!merged.has(property.getName())) merged.set(property.getName(), property);
      }
    }
    return [...merged.values()];
  };
  parser.getBaseTypes = function (node, context) {
    return all(node).flatMap((declaration) => getBaseTypes.call(this, declaration, context));
  };
  parser.getAdditionalProperties = function (node, context) {
    const indexed = all(node).find((d) => d.members.some(ts.isIndexSignatureDeclaration));
    return getAdditionalProperties.call(this, indexed || node, context);
  };
}

const LIBRARY_FUNCTIONS = new Set(["Function", "CallableFunction", "NewableFunction"]);

// Whether a value of the checker's `type` is a function, which JSON.stringify does not write:
// one with a call or construct signature, or the lib's `Function` (which has neither). One
// with a toJSON() is what its toJSON() returns (JSON.stringify calls it first).
function isFunctionType(ts, program, checker, type) {
  if (checker.getPropertyOfType(type, "toJSON")) return false;
  if (type.getCallSignatures().length || type.getConstructSignatures().length) return true;
  const symbol = type.getSymbol();
  return Boolean(
    symbol &&
      LIBRARY_FUNCTIONS.has(symbol.name) &&
      (symbol.declarations || []).some((d) => program.isSourceFileDefaultLibrary(d.getSourceFile())),
  );
}

// Whether `node` is a reference to (or literal of) a function type the generator reads as an
// object (a callable interface, the lib's `Function`, whose members it would write as
// required properties). Its type stays the object the generator makes of it, so that
// `Callable["n"]`, `keyof Callable` and `Pick<Callable, "n">` read its members; where a value
// of it is written (a property, an element, an index signature's value), it is a function.
function isFunctionReference(ts, program, checker, node) {
  if (!ts.isTypeReferenceNode(node) && !ts.isTypeLiteralNode(node)) return false;
  return isFunctionType(ts, program, checker, checker.getTypeFromTypeNode(node));
}

class Inexact extends Error {}

const COLLECTIONS = new Set(["Map", "Set", "WeakMap", "WeakSet", "ReadonlyMap", "ReadonlySet"]);

// Constructs ts-json-schema-generator turns into a schema that says something else: refused
// (an Inexact error naming the construct and where it is) before it parses them.
function inexact(ts, program, checker, node, context) {
  if (ts.isMappedTypeNode(node) && node.nameType) {
    return ["a mapped type that renames its keys (`as` clause)", node];
  }
  if (ts.isTypeReferenceNode(node)) {
    let symbol = checker.getSymbolAtLocation(node.typeName);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    if (!symbol) return null;
    // What the generator writes as {"description": "Failed to correctly infer type"}.
    if (symbol.flags & ts.SymbolFlags.TypeParameter && context.getArgument(symbol.name) === undefined) {
      return ["a type inferred from code (ReturnType<typeof f>, `infer`)", node];
    }
    const library = (symbol.declarations || []).some((d) => program.isSourceFileDefaultLibrary(d.getSourceFile()));
    if (library && COLLECTIONS.has(symbol.name)) return [`a ${symbol.name} (JSON.stringify writes it as {})`, node];
  }
  // Seen at the member's type: a computed name that is no string or number constant (a
  // symbol) was written as the checker's internal name (__@iterator@12) or "__computed".
  const member = node.parent;
  if (member && member.type === node && member.name && ts.isComputedPropertyName(member.name)) {
    const key = checker.getTypeAtLocation(member.name.expression);
    if (!(key.flags & (ts.TypeFlags.StringLiteral | ts.TypeFlags.NumberLiteral))) {
      return ["a property keyed by a symbol or another non-constant (no JSON name)", member];
    }
  }
  return null;
}

// Builds the one-line refusal of a construct, placed in the checkout: a construct met in a
// library (node_modules, lib.d.ts) is placed where the checkout's type being parsed uses it.
class Refusals {
  constructor(root) {
    this.root = root;
    this.seen = []; // the checkout's nodes being parsed, innermost last
  }

  inside(node) {
    const file = node.pos >= 0 && node.getSourceFile();
    const name = file && path.resolve(file.fileName);
    return name && isOwn(this.root, name) ? node : null;
  }

  error(construct, place) {
    const at = this.inside(place) || this.seen[this.seen.length - 1] || place;
    const file = at.getSourceFile();
    const { line } = file.getLineAndCharacterOfPosition(at.getStart(file));
    const text = at.getText(file).replace(/\s+/g, " ").replace(/[;,]$/, "");
    const shown = text.length > 60 ? `${text.slice(0, 57)}...` : text;
    return new Inexact(`${construct} at ${path.relative(this.root, file.fileName)}:${line + 1} (${shown})`);
  }
}

function refuseInexact(ts, tsj, program, chain, refusals, callables) {
  const checker = program.getTypeChecker();
  const createType = chain.createType.bind(chain);
  chain.createType = (node, context, reference) => {
    const found = inexact(ts, program, checker, node, context);
    if (found) throw refusals.error(...found);
    const mine = refusals.inside(node);
    if (mine) refusals.seen.push(mine);
    try {
      const type = createType(node, context, reference);
      if (type && isFunctionReference(ts, program, checker, node)) callables.add(tsj.derefType(type));
      return type;
    } finally {
      if (mine) refusals.seen.pop();
    }
  };
}

const TYPE_KINDS = new Set(["InterfaceDeclaration", "TypeAliasDeclaration", "EnumDeclaration", "ClassDeclaration"]);

function extract(ts, checker, generator, exported, name, root) {
  const resolve = (symbol) => (symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
  let symbol = resolve(exported.get(name));
  if (!symbol) {
    // `export default interface Def`: exported as "default", declared as Def.
    const fallback = resolve(exported.get("default"));
    const declared = fallback && (fallback.declarations || []).find((d) => d.name && d.name.text === name);
    if (!declared) return { kind: "no-type", error: `${name} is not exported from the file` };
    symbol = fallback;
  }
  const declarations = symbol.declarations || [];
  const kinds = declarations.map((d) => ts.SyntaxKind[d.kind]);
  if (!kinds.some((kind) => TYPE_KINDS.has(kind))) {
    const what = kinds.map((kind) => kind.replace(/Declaration$/, "").toLowerCase()).join(", ");
    return { kind: "not-type", error: `${name} is a ${what || "value"}, not an interface or type alias` };
  }
  // The declaration the export resolves to (a re-export with renaming, a default export),
  // not whichever type of that name the generator finds first among the program's files.
  const node = declarations.find((d) => TYPE_KINDS.has(ts.SyntaxKind[d.kind]));
  if (node.typeParameters && node.typeParameters.length) {
    return { kind: "not-type", error: `${name} is generic: extract a type alias that gives its type arguments` };
  }
  let schema;
  try {
    schema = generator.createSchemaFromNodes([node]);
  } catch (error) {
    let cause = error;
    while (cause && !(cause instanceof Inexact) && cause.cause) cause = cause.cause;
    if (cause instanceof Inexact) return { kind: "inexact", error: firstLine(cause.message) };
    return { kind: "generator", error: firstLine(error.message || error) };
  }
  let positions = {};
  try {
    positions = locate(ts, checker, symbol, schema, root);
  } catch (error) {
    positions = {}; // no place to point at is no reason to lose the schema
  }
  return { schema, positions };
}

function escape(token) {
  return String(token).replace(/~/g, "~0").replace(/\//g, "~1");
}

// Where each property of the schema is declared: {pointer: [file, line, column]}, walking the
// schema and the type side by side (properties, items, tuple members, union members matched
// by their property names, index signatures). Lines and columns are 1-based, columns in
// Unicode code points, as annotations count them.
function locate(ts, checker, symbol, schema, root) {
  const out = Object.create(null);
  const place = (pointer, node) => {
    if (!node) return;
    const file = node.getSourceFile();
    const name = path.resolve(file.fileName);
    if (!underRoot(root, name)) return; // a declaration outside the checkout
    const start = node.getStart(file);
    const { line, character } = file.getLineAndCharacterOfPosition(start);
    const lineStart = file.getPositionOfLineAndCharacter(line, 0);
    const column = Array.from(file.text.slice(lineStart, lineStart + character)).length + 1;
    out[pointer] = [path.relative(root, name).split(path.sep).join("/"), line + 1, column];
  };
  const declaration = (symbol.declarations || [])[0];
  place("#", declaration && (declaration.name || declaration));
  const nonNull = (type) => (type && checker.getNonNullableType ? checker.getNonNullableType(type) : type);
  const typeOf = (prop) => {
    const decl = prop.valueDeclaration || (prop.declarations || [])[0];
    if (checker.getTypeOfSymbol) return checker.getTypeOfSymbol(prop);
    return decl ? checker.getTypeOfSymbolAtLocation(prop, decl) : undefined;
  };
  const names = (type) => new Set(checker.getPropertiesOfType(type).map((p) => p.name));
  const walk = (node, type, pointer, depth) => {
    if (!node || typeof node !== "object" || Array.isArray(node) || !type || depth > 64) return;
    type = nonNull(type);
    // A type with a toJSON() was extracted as what it returns: walked as that too.
    const toJSON = checker.getPropertyOfType(type, "toJSON");
    const [signature] = toJSON ? typeOf(toJSON).getCallSignatures() : [];
    if (signature) type = nonNull(checker.getReturnTypeOfSignature(signature));
    // A schema reached through a named type (an array's element, a union member) is placed
    // at that type's declaration: its keywords (required ...) are written there.
    const named = type.aliasSymbol || type.symbol;
    const declared = named && (named.declarations || [])[0];
    if (!(pointer in out) && declared && declared.name) place(pointer, declared.name);
    if (node.properties && typeof node.properties === "object") {
      for (const [name, sub] of Object.entries(node.properties)) {
        const prop = checker.getPropertyOfType(type, name);
        if (!prop) continue;
        const decl = prop.valueDeclaration || (prop.declarations || [])[0];
        const at = `${pointer}/properties/${escape(name)}`;
        place(at, decl && (decl.name || decl));
        walk(sub, typeOf(prop), at, depth + 1);
      }
    }
    if (checker.isArrayType && checker.isArrayType(type)) {
      const [element] = checker.getTypeArguments(type);
      if (node.items && !Array.isArray(node.items)) walk(node.items, element, `${pointer}/items`, depth + 1);
    } else if (checker.isTupleType && checker.isTupleType(type)) {
      const members = checker.getTypeArguments(type);
      const list = Array.isArray(node.prefixItems) ? ["prefixItems", node.prefixItems] : Array.isArray(node.items) ? ["items", node.items] : null;
      if (list) list[1].forEach((sub, i) => walk(sub, members[i], `${pointer}/${list[0]}/${i}`, depth + 1));
    }
    if (node.additionalProperties && typeof node.additionalProperties === "object") {
      const index = checker.getIndexTypeOfType(type, ts.IndexKind.String);
      if (index) walk(node.additionalProperties, index, `${pointer}/additionalProperties`, depth + 1);
    }
    for (const keyword of ["anyOf", "oneOf", "allOf"]) {
      if (!Array.isArray(node[keyword])) continue;
      const members = type.isUnion() ? type.types : [type];
      node[keyword].forEach((sub, i) => {
        const wanted = sub && sub.properties ? Object.keys(sub.properties) : null;
        if (!wanted) return;
        // The member with the branch's property names whose literal types agree with the
        // branch's constants most (a discriminated union repeats its names): a union's order
        // is the checker's, not the source's.
        let match = null;
        let best = -1;
        for (const member of members) {
          const have = names(member);
          if (!wanted.every((w) => have.has(w))) continue;
          let score = have.size === wanted.length ? 1 : 0;
          for (const w of wanted) {
            const branch = sub.properties[w];
            const constant = branch && ("const" in branch ? branch.const : Array.isArray(branch.enum) && branch.enum.length === 1 ? branch.enum[0] : undefined);
            if (constant === undefined) continue;
            const prop = checker.getPropertyOfType(member, w);
            const literal = prop && nonNull(typeOf(prop));
            if (literal && literal.isLiteral && literal.isLiteral() && literal.value === constant) score += 2;
          }
          if (score > best) [match, best] = [member, score];
        }
        if (match) walk(sub, match, `${pointer}/${keyword}/${i}`, depth + 1);
      });
    }
  };
  walk(schema, checker.getDeclaredTypeOfSymbol(symbol), "#", 0);
  return out;
}

try {
  main();
} catch (error) {
  reply({ kind: "internal", error: firstLine((error && error.stack) || error) });
}
