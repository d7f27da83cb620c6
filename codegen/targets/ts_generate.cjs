// The contract's TypeScript types, by json-schema-to-typescript's API.
// Run by codegen.targets.typescript: node ts_generate.cjs NODE_MODULES, the request on stdin
// ({"schema": ..., "name": ...}); stdout: one JSON document, {"ts": "..."} or {"error": "..."}.
"use strict";
const path = require("node:path");

function reply(document) {
  process.stdout.write(JSON.stringify(document));
}

function firstLine(text) {
  return String(text).split("\n").find((line) => line.trim()) || String(text);
}

async function main() {
  const [modules] = process.argv.slice(2);
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  let compile;
  try {
    ({ compile } = require(path.join(modules, "json-schema-to-typescript")));
  } catch (error) {
    return reply({ error: `cannot load json-schema-to-typescript: ${firstLine(error.message)}` });
  }
  const options = {
    bannerComment: "", // ours, with the contract's versions and hashes, is added by the caller
    declareExternallyReferenced: true,
    unreachableDefinitions: true, // every definition, used by a record type or not
    additionalProperties: true, // JSON Schema's default: an object is open unless it says not
    strictIndexSignatures: false,
    unknownAny: true, // `unknown`, not `any`: --strict code must narrow what it reads
    enableConstEnums: false,
    inferStringEnumKeysFromValues: false,
    ignoreMinAndMaxItems: false,
    maxItems: 20,
    format: true, // the pinned prettier, with these settings (no config file is read)
    style: {
      bracketSpacing: true,
      printWidth: 100,
      semi: true,
      singleQuote: false,
      tabWidth: 2,
      trailingComma: "all",
      useTabs: false,
      endOfLine: "lf",
    },
    // Local "#/$defs/..." references only: nothing is read from disk or the network.
    $refOptions: { resolve: { http: false, file: false } },
  };
  try {
    reply({ ts: await compile(request.schema, request.name, options) });
  } catch (error) {
    reply({ error: firstLine((error && error.message) || error) });
  }
}

main().catch((error) => reply({ error: firstLine((error && error.message) || error) }));
