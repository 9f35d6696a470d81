// The word-stats agent as an MCP server written with the official TypeScript SDK 2.x
// (`@modelcontextprotocol/server` and `@modelcontextprotocol/node`, pinned in package.json
// beside this file), for tests/it/eras.rs: the harness must test it in each protocol era it
// speaks, and catch each defect with the right trial.
//
//   PORT=8080 MODE=strict node server.mjs
//
// Serves http://127.0.0.1:$PORT/mcp with `createMcpHandler` and the low-level `Server`: one
// tool, `word_stats`, whose `inputSchema` is `interface.input` of
// tests/fixtures/harness/word-stats.yaml; a declared failure is `isError: true` with
// `structuredContent.error`.
//
//   strict        2026-07-28 only: `createMcpHandler(factory, { legacy: 'reject' })`, which
//                 answers `initialize` with HTTP 400 and -32022 listing 2026-07-28
//   dual          both eras, the SDK's default posture
//   dual-legacy-text-only
//                 both eras, the 2025 leg routed with `isLegacyRequest` to its own factory,
//                 whose successes carry the JSON as text only (the 2026-07-28 leg is right)
//   drifted       strict, `words` one more than the text has
//   text-only     strict, successes carry the JSON as text only, no `structuredContent`
//   wrong-code    strict, the empty text fails with `no_words`, a code the manifest does not
//                 declare
//   renamed-tool  strict, the tool is listed as `word_stat` (a call by either name works)
//
// Arguments are ignored: the tests put a unique `--holon-test-marker=...` on the command line
// to find every process they started.
import { createServer } from "node:http";
import { Server, createMcpHandler, isLegacyRequest } from "@modelcontextprotocol/server";
import { toNodeHandler } from "@modelcontextprotocol/node";

const MODE = process.env.MODE ?? "strict";

const INPUT_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["text"],
  properties: {
    text: { type: "string", maxLength: 1000000, description: "The text to measure." },
    top: {
      type: "integer",
      minimum: 0,
      maximum: 50,
      default: 10,
      description: "How many frequent words to return.",
    },
    words_per_minute: {
      type: "integer",
      minimum: 50,
      maximum: 1000,
      default: 230,
      description: "Reading speed used for the reading time.",
    },
  },
};

// The output or the error envelope, as the Rust runtime lists it.
const OUTPUT_SCHEMA = {
  type: "object",
  anyOf: [
    {
      type: "object",
      required: ["characters", "words", "top_words", "reading_time_s"],
      properties: {
        characters: { type: "integer" },
        words: { type: "integer" },
        top_words: { type: "array" },
        reading_time_s: { type: "integer" },
      },
    },
    {
      type: "object",
      required: ["error"],
      properties: {
        error: {
          type: "object",
          required: ["code", "message"],
          properties: { code: { type: "string" }, message: { type: "string" } },
        },
      },
    },
  ],
};

/** examples/word-stats/src/lib.rs, in JavaScript: words are runs of letters, digits, ' and -. */
function wordStats({ text, top = 10, words_per_minute: wpm = 230 }) {
  if (text.trim() === "") return null;
  const words = (text.match(/[\p{Alphabetic}\p{N}'-]+/gu) ?? []).map((w) => w.toLowerCase());
  const counts = new Map();
  for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
  const ranked = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, top);
  return {
    characters: [...text].length,
    words: words.length,
    top_words: ranked.map(([word, count]) => ({ word, count })),
    reading_time_s: Math.ceil((words.length * 60) / Math.max(wpm, 1)),
  };
}

/** A server instance with the one tool; `defect` is the mode it answers in. */
function factory(defect) {
  return () => {
    const s = new Server({ name: "word-stats-ts2", version: "1.0.0" }, { capabilities: { tools: {} } });
    s.setRequestHandler("tools/list", async () => ({
      tools: [
        {
          name: defect === "renamed-tool" ? "word_stat" : "word_stats",
          description: "Counts characters, words and frequent words in a text.",
          inputSchema: INPUT_SCHEMA,
          outputSchema: OUTPUT_SCHEMA,
        },
      ],
    }));
    s.setRequestHandler("tools/call", async (request) => {
      const output = wordStats(request.params.arguments ?? {});
      if (output === null) {
        const code = defect === "wrong-code" ? "no_words" : "empty_text";
        const failure = { error: { code, message: "the text is empty or only whitespace" } };
        return { content: [{ type: "text", text: JSON.stringify(failure) }], structuredContent: failure, isError: true };
      }
      if (defect === "drifted") output.words += 1;
      const content = [{ type: "text", text: JSON.stringify(output) }];
      return defect === "text-only" ? { content } : { content, structuredContent: output };
    });
    return s;
  };
}

let handler;
switch (MODE) {
  case "dual":
    handler = toNodeHandler(createMcpHandler(factory("none")));
    break;
  case "dual-legacy-text-only": {
    const modern = createMcpHandler(factory("none"), { legacy: "reject" });
    const legacy = createMcpHandler(factory("text-only"));
    handler = toNodeHandler({
      fetch: async (request) => ((await isLegacyRequest(request)) ? legacy : modern).fetch(request),
    });
    break;
  }
  case "strict":
  case "drifted":
  case "text-only":
  case "wrong-code":
  case "renamed-tool":
    handler = toNodeHandler(createMcpHandler(factory(MODE), { legacy: "reject" }));
    break;
  default:
    console.error(`eras server: unknown MODE ${MODE}`);
    process.exit(2);
}

const port = Number(process.env.PORT);
createServer(async (req, res) => {
  if (new URL(req.url, "http://localhost").pathname !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  await handler(req, res);
}).listen(port, "127.0.0.1", () =>
  console.error(`eras server (${MODE}): listening on http://127.0.0.1:${port}/mcp`),
);
