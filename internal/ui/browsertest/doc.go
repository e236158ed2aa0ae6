// Package browsertest holds only tests: weir's UI driven in headless
// Chromium (Debian's chromium package) through the DevTools protocol with
// chromedp, against the real internal/ui/server on a real control plane with
// weir's controllers running in-process. The tests skip when no Chromium is
// installed, unless WEIR_REQUIRE_BROWSER=1 (as .ci/run sets), and save a
// PNG screenshot of every page they look at under $WEIR_TEST_ARTIFACTS (or
// the system temporary directory's weir-ui-screenshots).
package browsertest
