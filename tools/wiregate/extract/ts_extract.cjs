// The JSON Schema of one exported TypeScript type, by ts-json-schema-generator's API.
// Run by wiregate.extract.typescript: node ts_extract.cjs NODE_MODULES REQUEST_JSON
// stdout: one JSON document, {"schema": ..., "files": [...]} or {"error": "...", "kind": "..."}.
"use strict";
const path = require("node:path");

function reply(document) {
  process.stdout.write(JSON.stringify(document));
}

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
  let program;
  try {
    program = tsj.createProgram(config);
  } catch (error) {
    return reply({ kind: "compile", error: firstLine(error.message || error) });
  }
  const root = path.resolve(request.root);
  const files = program
    .getSourceFiles()
    .map((file) => path.resolve(file.fileName))
    .filter((name) => name.startsWith(root + path.sep) && !name.includes(`${path.sep}node_modules${path.sep}`));
  for (const file of program.getSourceFiles()) {
    if (!files.includes(path.resolve(file.fileName))) continue;
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
  const source = program.getSourceFile(path.resolve(request.root, request.path));
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  const exported = new Map(
    (moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : []).map((s) => [s.name, s]),
  );
  const generator = new tsj.SchemaGenerator(
    program,
    tsj.createParser(program, config),
    tsj.createFormatter(config),
    config,
  );
  const types = {};
  for (const name of request.types) {
    types[name] = extract(ts, checker, generator, exported, name);
  }
  reply({ types, files: files.map((name) => path.relative(root, name)).sort() });
}

const TYPE_KINDS = new Set(["InterfaceDeclaration", "TypeAliasDeclaration", "EnumDeclaration", "ClassDeclaration"]);

function extract(ts, checker, generator, exported, name) {
  let symbol = exported.get(name);
  if (!symbol) return { kind: "no-type", error: `${name} is not exported from the file` };
  if (symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const kinds = (symbol.declarations || []).map((d) => ts.SyntaxKind[d.kind]);
  if (!kinds.some((kind) => TYPE_KINDS.has(kind))) {
    const what = kinds.map((kind) => kind.replace(/Declaration$/, "").toLowerCase()).join(", ");
    return { kind: "not-type", error: `${name} is a ${what || "value"}, not an interface or type alias` };
  }
  try {
    return { schema: generator.createSchema(name) };
  } catch (error) {
    const kind = error && error.constructor && error.constructor.name === "RootlessError" ? "no-type" : "generator";
    return { kind, error: firstLine(error.message || error) };
  }
}

try {
  main();
} catch (error) {
  reply({ kind: "internal", error: firstLine((error && error.stack) || error) });
}
