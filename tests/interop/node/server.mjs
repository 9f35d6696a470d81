// The word-stats agent as an MCP server written with the official TypeScript SDK, answering
// every input correctly, for tests/it/explore.rs: explore must raise no false alarm on it.
//
//   PORT=8080 node server.mjs
//   PORT=8080 EXPRESS=1 node server.mjs   (the SDK's express app, with its 100 KB body limit)
//
// Serves stateless Streamable HTTP at http://127.0.0.1:$PORT/mcp with the low-level `Server`:
// one tool, `word_stats`, with `interface.input` of tests/fixtures/harness/word-stats.yaml as
// its `inputSchema`; a declared failure is `isError: true` with `structuredContent.error`.
import { createServer } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

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

function result(structured, isError) {
  return {
    content: [{ type: "text", text: JSON.stringify(structured) }],
    structuredContent: structured,
    ...(isError ? { isError: true } : {}),
  };
}

function server() {
  const s = new Server({ name: "word-stats-ts", version: "1.0.0" }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: "word_stats",
        description: "Counts characters, words and frequent words in a text.",
        inputSchema: INPUT_SCHEMA,
        outputSchema: OUTPUT_SCHEMA,
      },
    ],
  }));
  s.setRequestHandler(CallToolRequestSchema, async (request) => {
    const output = wordStats(request.params.arguments ?? {});
    if (output === null) {
      return result({ error: { code: "empty_text", message: "the text is empty or only whitespace" } }, true);
    }
    return result(output, false);
  });
  return s;
}

const port = Number(process.env.PORT);

/** One request through a fresh stateless server and transport, as the SDK's own example does. */
async function handle(req, res, body) {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const s = server();
  res.on("close", () => {
    transport.close();
    s.close();
  });
  await s.connect(transport);
  await transport.handleRequest(req, res, body);
}

const listening = () => console.error(`ts server: listening on http://127.0.0.1:${port}/mcp`);
if (process.env.EXPRESS === "1") {
  // `EXPRESS=1`: the SDK's `createMcpExpressApp`, as its guides set a server up. It keeps
  // express's JSON body limit (100 KB), so a larger call is answered HTTP 413 with express's
  // HTML error page: tests/it/explore.rs holds the harness to name that answer for what it is.
  const { createMcpExpressApp } = await import("@modelcontextprotocol/sdk/server/express.js");
  const app = createMcpExpressApp();
  app.post("/mcp", (req, res) => handle(req, res, req.body));
  app.listen(port, "127.0.0.1", listening);
} else {
  createServer(async (req, res) => {
    if (new URL(req.url, "http://localhost").pathname !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    await handle(req, res);
  }).listen(port, "127.0.0.1", listening);
}
