// The interfaces and type aliases of TypeScript files, by the TypeScript parser alone (no
// program, no type checker, nothing read from disk): what `wiregate drift --discover` needs
// to score a type against the contract by its property names.
// Run by wiregate.extract.declarations: node ts_declarations.cjs NODE_MODULES; stdin is
// {"files": {path: text}}; stdout {"files": {path: [declaration]}} or {"error": "..."}.
"use strict";
const path = require("node:path");

const MAX_DEPTH = 16; // of nested type literals, arrays and unions: names below are not scored

function main() {
  const [modules] = process.argv.slice(2);
  const ts = require(path.join(modules, "typescript"));
  const request = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
  // Null prototypes: a file or property named __proto__ is a key like any other.
  const files = Object.create(null);
  for (const [name, text] of Object.entries(request.files)) {
    try {
      files[name] = declarations(ts, name, text);
    } catch (error) {
      files[name] = { error: String((error && error.message) || error).split("\n")[0] };
    }
  }
  process.stdout.write(JSON.stringify({ files }));
}

function hasModifier(ts, node, kind) {
  return (ts.getModifiers ? ts.getModifiers(node) || [] : node.modifiers || []).some((m) => m.kind === kind);
}

function propertyName(ts, name) {
  if (!name) return null;
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  if (ts.isPrivateIdentifier && ts.isPrivateIdentifier(name)) return null;
  return null; // a computed name says nothing we can read without the checker
}

// A type node as a small shape: {ref}, {items}, {anyOf}, {allOf}, {properties}, or {}.
function shape(ts, node, depth) {
  if (!node || depth > MAX_DEPTH) return {};
  if (ts.isParenthesizedTypeNode(node)) return shape(ts, node.type, depth);
  if (ts.isTypeOperatorNode(node)) return shape(ts, node.type, depth); // readonly T[]
  if (ts.isArrayTypeNode(node)) return { items: shape(ts, node.elementType, depth + 1) };
  if (ts.isTupleTypeNode(node)) {
    return { anyOf: node.elements.map((e) => ({ items: shape(ts, e.type || e, depth + 1) })) };
  }
  if (ts.isUnionTypeNode(node)) return { anyOf: node.types.map((t) => shape(ts, t, depth + 1)) };
  if (ts.isIntersectionTypeNode(node)) return { allOf: node.types.map((t) => shape(ts, t, depth + 1)) };
  if (ts.isTypeLiteralNode(node)) return { properties: members(ts, node.members, depth + 1) };
  if (ts.isTypeReferenceNode(node)) {
    const name = ts.isIdentifier(node.typeName) ? node.typeName.text : node.typeName.right.text;
    const args = node.typeArguments || [];
    if ((name === "Array" || name === "ReadonlyArray") && args.length === 1) {
      return { items: shape(ts, args[0], depth + 1) };
    }
    if (["Partial", "Required", "Readonly"].includes(name) && args.length === 1) {
      return shape(ts, args[0], depth + 1);
    }
    return { ref: name };
  }
  return {};
}

function members(ts, list, depth) {
  const properties = Object.create(null);
  for (const member of list) {
    if (!ts.isPropertySignature(member) && !ts.isPropertyDeclaration(member)) continue;
    const name = propertyName(ts, member.name);
    if (name !== null) properties[name] = shape(ts, member.type, depth);
  }
  return properties;
}

function declarations(ts, name, text) {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, false);
  const exportedNames = new Set();
  for (const statement of source.statements) {
    // `export { A, B as C }` of local declarations (no module: a re-export names another file)
    if (ts.isExportDeclaration(statement) && !statement.moduleSpecifier && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) {
        if (!element.propertyName) exportedNames.add(element.name.text); // renamed: not by its name
      }
    }
  }
  const found = [];
  for (const statement of source.statements) {
    const isInterface = ts.isInterfaceDeclaration(statement);
    if (!isInterface && !ts.isTypeAliasDeclaration(statement)) continue;
    const declared = statement.name.text;
    const exported = hasModifier(ts, statement, ts.SyntaxKind.ExportKeyword) || exportedNames.has(declared);
    const start = statement.name.getStart(source);
    const { line, character } = source.getLineAndCharacterOfPosition(start);
    const lineStart = source.getPositionOfLineAndCharacter(line, 0);
    const column = Array.from(text.slice(lineStart, lineStart + character)).length + 1;
    let body;
    if (isInterface) {
      body = { properties: members(ts, statement.members, 1) };
      const bases = [];
      for (const clause of statement.heritageClauses || []) {
        for (const base of clause.types) {
          if (ts.isIdentifier(base.expression)) bases.push({ ref: base.expression.text });
        }
      }
      if (bases.length) body.allOf = bases;
    } else {
      body = shape(ts, statement.type, 1);
    }
    found.push({ name: declared, exported, line: line + 1, column, shape: body });
  }
  return found;
}

try {
  main();
} catch (error) {
  process.stdout.write(JSON.stringify({ error: String((error && error.message) || error).split("\n")[0] }));
}
