// The eliza rollout plugin's HTTP sink, as its writeToSink sends: one POST per action run,
// {"records": [...]} as JSON, with Node's own fetch. Usage: node plugin_sink.mjs URL RECORDS
// [HEADERS_JSON]; prints the status and the response body.
import { readFileSync } from "node:fs";

const [url, recordsPath, headersJson] = process.argv.slice(2);
const records = JSON.parse(readFileSync(recordsPath, "utf8"));
const headers = headersJson ? JSON.parse(headersJson) : {};
const response = await fetch(url, {
  method: "POST",
  headers: { "Content-Type": "application/json", ...headers },
  body: JSON.stringify({ records }),
});
console.log(response.status);
console.log(await response.text());
