package browsertest

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// layout is what a page's geometry says about its fit.
type layout struct {
	PageWidth, ViewWidth float64
	// Overflowing names the elements whose right edge passes the screen's
	// (excluding those inside their own scrolling box).
	Overflowing []string
	RowHeight   float64
	RowDisplay  string
	NameRight   float64
}

// measure reads the page's geometry: the document's scroll width against
// the viewport, every visible element that sticks out of the screen
// without a scrolling ancestor, and the first object row's height and
// display.
func (b *browser) measure() layout {
	b.t.Helper()
	var l layout
	b.eval(`(() => {
		const vw = document.documentElement.clientWidth;
		const scrolls = (el) => {
			for (let p = el.parentElement; p; p = p.parentElement) {
				const o = getComputedStyle(p).overflowX;
				if (o === 'auto' || o === 'scroll' || o === 'hidden') return p !== document.documentElement && p !== document.body;
			}
			return false;
		};
		const over = [...document.querySelectorAll('body *')].filter((el) => {
			const r = el.getBoundingClientRect();
			return r.width > 0 && r.height > 0 && r.right > vw + 1 && !scrolls(el) && getComputedStyle(el).position !== 'absolute';
		}).slice(0, 5).map((el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : ''));
		const row = document.querySelector('[data-testid=object-row]');
		const name = row?.querySelector('[data-col=name] a');
		return {pageWidth: document.documentElement.scrollWidth, viewWidth: vw, overflowing: over,
			rowHeight: row ? row.getBoundingClientRect().height : 0, rowDisplay: row ? getComputedStyle(row).display : '',
			nameRight: name ? name.getBoundingClientRect().right : 0};
	})()`, &l)
	return l
}

// TestPhoneLayout opens every page at 390×844 (a phone held upright) and
// at 1440×900: on the phone nothing is wider than the screen, the object
// table is one card per object with the whole name on screen; on the
// desktop the table stays a table.
func TestPhoneLayout(t *testing.T) {
	f := newFleet(t)
	b := newUI(t, f.env.Config)
	b.do("a phone's viewport", chromedp.EmulateViewport(390, 844))
	pages := []string{
		"/?namespace=" + f.ns,
		"/graph?namespace=" + f.ns,
		ksURL(f.ns, "apps"),
		ksURL(f.ns, "broken"),
		fmt.Sprintf("/objects/GitRepository/%s/fleet", f.ns),
	}
	for _, p := range pages {
		b.open(p)
		b.waitJS("the diff or its absence", `!document.querySelector('[data-testid=diff-loading]')`, 30*1e9)
		l := b.measure()
		b.screenshot("phone" + fmt.Sprint(len(p)))
		if l.PageWidth > l.ViewWidth+1 || len(l.Overflowing) > 0 {
			t.Errorf("%s at 390 px: page %v px wide for a %v px screen; sticking out: %v", p, l.PageWidth, l.ViewWidth, l.Overflowing)
		}
		if p == pages[0] {
			if l.RowDisplay != "grid" {
				t.Errorf("object rows display as %q on a phone, want cards (grid)", l.RowDisplay)
			}
			if l.RowHeight == 0 || l.RowHeight > 160 {
				t.Errorf("an object card is %v px tall, want under 160", l.RowHeight)
			}
			if l.NameRight == 0 || l.NameRight > l.ViewWidth {
				t.Errorf("the first object's name ends at %v px, off a %v px screen", l.NameRight, l.ViewWidth)
			}
		}
	}
	b.do("a desktop viewport", chromedp.EmulateViewport(1440, 900))
	b.open(pages[0])
	l := b.measure()
	if l.RowDisplay != "table-row" || l.PageWidth > l.ViewWidth+1 {
		t.Errorf("at 1440 px: rows display as %q, page %v px for %v", l.RowDisplay, l.PageWidth, l.ViewWidth)
	}
}
