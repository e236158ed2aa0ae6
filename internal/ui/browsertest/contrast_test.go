package browsertest

import (
	"os"
	"testing"

	"github.com/chromedp/chromedp"
)

// The contrast check itself: low-contrast HTML text, text on a translucent
// background, and SVG text on its rect are found; good text is not.
func TestContrastCheckFindsLowContrast(t *testing.T) {
	b := launch(t)
	b.do("opening a blank page", chromedp.Navigate("about:blank"))
	b.eval(`(() => {
		document.body.style.background = '#ffffff';
		const add = (html) => { const d = document.createElement('div'); d.innerHTML = html; document.body.append(d); };
		add('<p id="good" style="color:#595959">good 7:1</p>');
		add('<p id="grey" style="color:#777777">grey on white 4.48:1</p>');
		add('<div style="background:rgba(0,0,0,0.5)"><span style="color:#444444">dark on half black</span></div>');
		add('<svg width="200" height="60"><g><rect width="200" height="60" style="fill:#0b57d0"></rect>' +
			'<text x="5" y="30" style="fill:#1b1f24">svg dark on blue</text></g></svg>');
		add('<svg width="200" height="60"><g><rect width="200" height="60" style="fill:#dafbe1"></rect>' +
			'<text x="5" y="30" style="fill:#0f5323">svg good</text></g></svg>');
	})()`, nil)
	src, err := os.ReadFile("testdata/contrast.js")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Checked  int
		Failures []contrastFailure
	}
	b.eval("("+string(src)+")(4.5)", &res)
	found := map[string]bool{}
	for _, f := range res.Failures {
		found[f.Text] = true
		t.Logf("found %q: %s on %s, %.2f:1", f.Text, f.Fg, f.Bg, f.Ratio)
	}
	if res.Checked != 5 {
		t.Errorf("checked %d text nodes, want 5", res.Checked)
	}
	for _, want := range []string{"grey on white 4.48:1", "dark on half black", "svg dark on blue"} {
		if !found[want] {
			t.Errorf("%q was not found below 4.5:1", want)
		}
	}
	for _, good := range []string{"good 7:1", "svg good"} {
		if found[good] {
			t.Errorf("%q was reported, but passes", good)
		}
	}
}
