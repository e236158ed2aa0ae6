package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"k8s.io/client-go/rest"
)

// chromiumPath finds Debian's chromium (or a Chrome) on PATH.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// requireBrowser skips the test when no browser is installed, or fails it
// when WEIR_REQUIRE_BROWSER=1 says one must be.
func requireBrowser(t *testing.T) string {
	t.Helper()
	p := chromiumPath()
	if p != "" {
		return p
	}
	msg := "the browser tests need Debian's chromium (apt-get install chromium); none found on PATH"
	if os.Getenv("WEIR_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg + ", and WEIR_REQUIRE_BROWSER=1")
	}
	t.Skip(msg)
	return ""
}

// browser is one headless Chromium tab for one test, 1280×900.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string // the UI's URL, no trailing slash
}

// newUI serves the UI for cfg's user and opens a logged-in browser on it.
func newUI(t *testing.T, cfg *rest.Config) *browser {
	t.Helper()
	b := launch(t)
	b.login(startUI(t, cfg))
	return b
}

func launch(t *testing.T) *browser {
	t.Helper()
	exe := requireBrowser(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // the tests may run as root in CI containers
		chromedp.DisableGPU,
		chromedp.Flag("lang", "en-US"),
		chromedp.Flag("font-render-hinting", "none"),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	return &browser{t: t, ctx: ctx}
}

// do runs actions with a deadline, failing the test on error.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open navigates to path and waits until the view says it is loaded.
func (b *browser) open(path string) {
	b.t.Helper()
	b.do("opening "+path, chromedp.Navigate(b.base+path))
	b.waitJS("the view of "+path+" to load", `document.getElementById('main')?.dataset.loaded === 'true'`, 30*time.Second)
}

// eval evaluates expr in the page and decodes its value into out.
func (b *browser) eval(expr string, out any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	if out == nil {
		return
	}
	if err := json.Unmarshal(raw, out); err != nil {
		b.t.Fatalf("decoding the value of %s (%s): %v", expr, raw, err)
	}
}

func (b *browser) str(expr string) string {
	b.t.Helper()
	var s string
	b.eval(expr, &s)
	return s
}

// waitJS polls expr until it is truthy, failing the test after timeout.
// It returns how long it took.
func (b *browser) waitJS(what, expr string, timeout time.Duration) time.Duration {
	b.t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(b.ctx, timeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		b.screenshot("timeout")
		b.t.Fatalf("waiting %s for %s: %v\nmain: %s", timeout, what, err, b.str(`document.getElementById('main')?.innerText.slice(0, 2000) || ''`))
	}
	return time.Since(start)
}

// key sends key presses to the focused element.
func (b *browser) key(keys string) {
	b.t.Helper()
	b.do("pressing "+keys, chromedp.KeyEvent(keys))
}

// colorScheme emulates prefers-color-scheme.
func (b *browser) colorScheme(scheme string) {
	b.t.Helper()
	b.do("emulating prefers-color-scheme: "+scheme, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	}))
}

var (
	artifactsOnce sync.Once
	artifactsDir  string
)

// artifacts is where screenshots go: $WEIR_TEST_ARTIFACTS, else the
// system temporary directory's weir-ui-screenshots (t.TempDir is wiped).
func artifacts(t *testing.T) string {
	t.Helper()
	artifactsOnce.Do(func() {
		dir := os.Getenv("WEIR_TEST_ARTIFACTS")
		if dir == "" {
			dir = filepath.Join(os.TempDir(), "weir-ui-screenshots")
		}
		artifactsDir = dir
	})
	return artifactsDir
}

// screenshot saves a PNG of the whole page as <test>-<name>.png.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	dir := artifacts(b.t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatalf("creating %s: %v", dir, err)
	}
	file := filepath.Join(dir, fmt.Sprintf("%s-%s.png", strings.ReplaceAll(b.t.Name(), "/", "_"), name))
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatalf("writing %s: %v", file, err)
	}
	b.t.Logf("screenshot: %s", file)
}

type contrastFailure struct {
	Text, Fg, Bg, Where string
	Ratio               float64
}

// checkContrast runs testdata/contrast.js in the page: every visible text
// node against its effective background, at least 4.5:1.
func (b *browser) checkContrast(where string) {
	b.t.Helper()
	src, err := os.ReadFile("testdata/contrast.js")
	if err != nil {
		b.t.Fatal(err)
	}
	var res struct {
		Checked  int
		Failures []contrastFailure
	}
	b.eval(fmt.Sprintf("(%s)(4.5)", src), &res)
	if res.Checked == 0 {
		b.t.Errorf("%s: the contrast check found no text to check", where)
	}
	for i, f := range res.Failures {
		if i == 20 {
			b.t.Errorf("%s: … %d more", where, len(res.Failures)-20)
			break
		}
		b.t.Errorf("%s: %q in %s is %s on %s, %.2f:1 (below 4.5)", where, f.Text, f.Where, f.Fg, f.Bg, f.Ratio)
	}
	b.t.Logf("%s: contrast checked on %d text nodes, %d below 4.5:1", where, res.Checked, len(res.Failures))
}
