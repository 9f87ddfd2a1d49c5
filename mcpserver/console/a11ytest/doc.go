// Package a11ytest checks the console's main pages for accessibility in
// headless Chromium with axe-core, in the light and the dark theme: no
// serious or critical finding is allowed.
//
// axe-core is an npm package pinned in package.json and package-lock.json;
// install it with `npm ci` in this directory. Without it the test skips,
// unless KOBANA_A11Y_REQUIRED is set (CI sets it and installs it); without
// Chromium it skips unless KOBANA_CHROMIUM_REQUIRED is set.
package a11ytest
