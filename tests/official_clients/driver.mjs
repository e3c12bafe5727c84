// One official MCP TypeScript client, driven by a test over newline-delimited JSON.
//
// The test (tests/wire/test_official_clients.py) decides what to call; this script
// only holds the client a host would embed and reports what it did, so the
// same walk runs through the Python client and through each TypeScript one.
// Every command is one line on stdin, every answer one line on stdout:
//
//   {"op": "connect", "sdk": "v1" | "v2", "transport": "stdio" | "http",
//    "era": "legacy" | "2026-07-28", "command": ..., "args": [...], "env": {...},
//    "cwd": ..., "url": ...}           -> {"ok": {"sdk": version, "protocolVersion": ...}}
//   {"op": "list"}                     -> {"ok": {"tools": [...]}}
//   {"op": "call", "name", "arguments"} -> {"ok": CallToolResult} or {"thrown": {...}}
//   {"op": "close"}                    -> {"ok": {}}
//
// "thrown" is what the client raised instead of handing back a result (a
// client-side schema check, a JSON-RPC error): its class name, code and message.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

// The installed version of a package (2.x packages do not export their package.json).
function installedVersion(name) {
    const manifest = new URL(`./node_modules/${name}/package.json`, import.meta.url);
    return JSON.parse(readFileSync(manifest, "utf8")).version;
}

// The server child a stdio transport spawns (both SDK lines take the same parameters).
function serverProcess(command) {
    return {
        command: command.command,
        args: command.args,
        env: command.env,
        cwd: command.cwd,
        stderr: "inherit",
    };
}

async function openClient(command) {
    const info = { name: "gno-trio-tests", version: "1.0.0" };
    if (command.sdk === "v1") {
        const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
        const version = installedVersion("@modelcontextprotocol/sdk");
        const client = new Client(info, { capabilities: {} });
        let transport;
        if (command.transport === "stdio") {
            const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
            transport = new StdioClientTransport(serverProcess(command));
        } else {
            const { StreamableHTTPClientTransport } = await import(
                "@modelcontextprotocol/sdk/client/streamableHttp.js"
            );
            transport = new StreamableHTTPClientTransport(new URL(command.url));
        }
        await client.connect(transport);
        return { client, version, protocolVersion: transport.protocolVersion ?? null };
    }
    const sdk = await import("@modelcontextprotocol/client");
    const version = installedVersion("@modelcontextprotocol/client");
    const mode = command.era === "legacy" ? "legacy" : { pin: command.era };
    const client = new sdk.Client(info, { capabilities: {}, versionNegotiation: { mode } });
    let transport;
    if (command.transport === "stdio") {
        const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
        transport = new StdioClientTransport(serverProcess(command));
    } else {
        transport = new sdk.StreamableHTTPClientTransport(new URL(command.url));
    }
    await client.connect(transport);
    return { client, version, protocolVersion: client.getNegotiatedProtocolVersion() ?? null };
}

function thrownOf(error) {
    return {
        name: error?.constructor?.name ?? typeof error,
        code: error?.code ?? null,
        message: String(error?.message ?? error),
    };
}

let session = null;

async function answer(command) {
    switch (command.op) {
        case "connect": {
            session = await openClient(command);
            return { sdk: session.version, protocolVersion: session.protocolVersion };
        }
        case "list": {
            const listed = await session.client.listTools();
            return { tools: listed.tools };
        }
        case "call":
            return await session.client.callTool({ name: command.name, arguments: command.arguments });
        case "close":
            if (session !== null) {
                await session.client.close();
                session = null;
            }
            return {};
        default:
            throw new Error(`unknown op ${command.op}`);
    }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
    if (!line.trim()) continue;
    let reply;
    try {
        reply = { ok: await answer(JSON.parse(line)) };
    } catch (error) {
        reply = { thrown: thrownOf(error) };
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
}
if (session !== null) await session.client.close();
