// Package chromiumtest starts headless Chromium (Debian's chromium package)
// for the tests that drive a real browser: the playground's page and the
// OAuth sign-in of the MCP client tests. Without Chromium the test skips
// and says so, or fails when KOBANA_CHROMIUM_REQUIRED is set (CI).
//
// Entry point: Browser.
package chromiumtest
