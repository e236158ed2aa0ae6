package browsertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestOverviewPages reads the object table two rows at a time, on a phone
// (390×844) and a desktop (1440×900): the first answer holds one page and
// the whole fleet's counts and attention list; the rows of the second page
// come on scrolling to the table's end, in the same order; a sort by name,
// either way (the header's button on a desktop, the visible "Sort by"
// select on a phone), is the server's across both pages; nothing sticks
// out of the phone's screen.
func TestOverviewPages(t *testing.T) {
	f := newFleet(t)
	b := newPagedUI(t, f.env.Config, 2)
	pagesAsked := func() int {
		var n int
		b.eval(`performance.getEntriesByType('resource').filter(e => e.name.includes('/api/overview') && e.name.includes('offset=2')).length`, &n)
		return n
	}
	// scrollToEnd scrolls to the table's end until the whole table shows,
	// in the order want.
	scrollToEnd := func(what, want string) {
		b.waitJS(what, fmt.Sprintf(`(window.scrollTo(0, document.documentElement.scrollHeight),
			[...document.querySelectorAll('[data-testid=object-row]')].map(r => r.dataset.id.split('/').pop()).join(',') === %q &&
			document.querySelector('[data-testid=rows-shown]').textContent === 'Showing 4 of 4' &&
			document.querySelector('[data-testid=more-rows]').hidden)`, want), 10*time.Second)
	}
	for _, vp := range []struct{ w, h int64 }{{390, 844}, {1440, 900}} {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			b.t = t
			b.do("the viewport", chromedp.EmulateViewport(vp.w, vp.h))
			b.open("/?namespace=" + f.ns)
			var first struct {
				Objects   []struct{ Name string }
				Attention []struct{ Name string }
				Counts    []struct {
					Kind  string
					Total int
				}
				Total int
			}
			b.eval(`fetch('/api/overview?namespace=`+f.ns+`').then(r => r.json())`, &first)
			if len(first.Objects) != 2 || first.Total != 4 || len(first.Attention) != 1 || len(first.Counts) != 2 {
				t.Errorf("the first answer: %d rows of %d, attention %v, counts %v; want 2 of 4, broken, two kinds",
					len(first.Objects), first.Total, first.Attention, first.Counts)
			}
			counts := b.str(`document.querySelector('[data-testid=counts] tfoot')?.innerText || ''`)
			if fields := strings.Fields(counts); len(fields) < 3 || fields[2] != "4" {
				t.Errorf("the counts' total line = %q, want 4 objects", counts)
			}
			scrollToEnd("the second page: attention first, then by kind and name", "broken,fleet,apps,infrastructure")
			if pagesAsked() == 0 {
				t.Error("the rows beyond the first page came without asking for offset=2")
			}
			b.eval(`window.scrollTo(0, 0)`, nil)
			// On a phone the header is for screen readers and keyboards
			// only (the rows are cards): a visible select sorts there, and
			// is not shown where the header is.
			selectShown := b.str(`String(document.querySelector('[data-testid=sort-select]').getBoundingClientRect().width > 0)`)
			sortBy := func(dir string) string {
				if vp.w < 640 {
					return `(s => { s.value = 'name:` + dir + `'; s.dispatchEvent(new Event('change')); })(document.querySelector('[data-testid=sort-select]'))`
				}
				return `document.querySelector('[data-testid=sort-name]').click()`
			}
			if want := fmt.Sprint(vp.w < 640); selectShown != want {
				t.Errorf("at %d px the sort select shown: %s, want %s", vp.w, selectShown, want)
			}
			b.eval(sortBy("asc"), nil)
			scrollToEnd("both pages by name", "apps,broken,fleet,infrastructure")
			if got := b.str(`document.querySelector('[data-testid=sort-select]').value + ' ' + document.querySelector('[data-testid=sort-name]').parentElement.getAttribute('aria-sort')`); got != "name:asc ascending" {
				t.Errorf("the select and the header say %q, want name:asc ascending", got)
			}
			b.eval(`window.scrollTo(0, 0)`, nil)
			b.eval(sortBy("desc"), nil)
			scrollToEnd("both pages by name, descending", "infrastructure,fleet,broken,apps")
			if l := b.measure(); l.PageWidth > l.ViewWidth+1 || len(l.Overflowing) > 0 {
				t.Errorf("at %d px: page %v px wide; sticking out: %v", vp.w, l.PageWidth, l.Overflowing)
			}
			b.screenshot(fmt.Sprintf("paged-%d", vp.w))
		})
	}
}
