package fleetview

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// DefaultPageSize is how many rows of the object table one page holds.
const DefaultPageSize = 200

// Columns are the object table's sortable columns, as /api/overview's
// sort parameter names them.
var Columns = []string{"state", "kind", "namespace", "name", "revision", "sync", "next", "reason"}

// Page picks the window of the overview's objects a request asks for: in
// the default order (what needs attention first) or sorted by a column,
// from Offset, at most Limit rows.
type Page struct {
	// Sort is one of Columns, "" for the default order; Desc reverses it.
	Sort string
	Desc bool
	// Offset is the first row's index in the whole sorted table.
	Offset, Limit int
	// Now is the time "next" sorts against (the next run still ahead).
	Now time.Time
}

// Apply sorts o.Objects as p says and keeps its page: o.Total stays the
// count of every selected object, o.Offset and o.Limit say which rows
// came.
func (p Page) Apply(o *Overview) {
	o.Total = len(o.Objects)
	if p.Sort != "" {
		key := sortKey(p.Sort, p.Now)
		keys := make(map[string]string, len(o.Objects))
		for _, s := range o.Objects {
			keys[summaryRef(s).String()] = key(s)
		}
		dir := 1
		if p.Desc {
			dir = -1
		}
		slices.SortStableFunc(o.Objects, func(a, b Summary) int {
			ra, rb := summaryRef(a).String(), summaryRef(b).String()
			return cmp.Or(dir*naturalCompare(keys[ra], keys[rb]), naturalCompare(ra, rb))
		})
	}
	limit := p.Limit
	if limit <= 0 {
		limit = DefaultPageSize
	}
	start := min(max(p.Offset, 0), len(o.Objects))
	end := min(start+limit, len(o.Objects))
	o.Objects = o.Objects[start:end:end]
	o.Offset, o.Limit = start, limit
}

// sortKey is the text a column sorts by, as the table shows it: the
// reason with its message, the next run as a time (suspended after every
// time, none last).
func sortKey(col string, now time.Time) func(Summary) string {
	switch col {
	case "state":
		return func(s Summary) string { return s.State }
	case "kind":
		return func(s Summary) string { return s.Kind }
	case "namespace":
		return func(s Summary) string { return s.Namespace }
	case "revision":
		return func(s Summary) string { return s.Revision }
	case "sync":
		return func(s Summary) string { return s.Sync }
	case "reason":
		return func(s Summary) string { return s.Reason + " " + s.Message }
	case "next":
		return func(s Summary) string {
			if at, ok := NextRun(s, now); ok {
				return strconv.FormatInt(at.UnixMilli(), 10)
			}
			if s.Suspended {
				return "~suspended"
			}
			return "~~"
		}
	}
	return func(s Summary) string { return s.Name }
}

// NextRun is when s runs next, as the page counts it: its last run plus
// whole intervals, the first still ahead of now; ok is false for a
// suspended object or one without a schedule.
func NextRun(s Summary, now time.Time) (time.Time, bool) {
	if s.Suspended || s.Interval <= 0 {
		return time.Time{}, false
	}
	last, err := time.Parse(time.RFC3339, s.LastRun)
	if err != nil {
		return time.Time{}, false
	}
	every := time.Duration(s.Interval) * time.Second
	at := last.Add(every)
	if !at.After(now) {
		at = at.Add(every * ((now.Sub(at) + every - 1) / every))
	}
	return at, true
}

// naturalCompare orders text as the page's numeric, case-insensitive
// collation does: runs of digits by their value, letters regardless of
// case, then the bytes to break ties.
func naturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := digitsEnd(a, i), digitsEnd(b, j)
			na, nb := strings.TrimLeft(a[i:ei], "0"), strings.TrimLeft(b[j:ej], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb)); c != 0 {
				return c
			}
			i, j = ei, ej
			continue
		}
		ca, cb := unicode.ToLower(rune(a[i])), unicode.ToLower(rune(b[j]))
		if ca != cb {
			return cmp.Compare(ca, cb)
		}
		i, j = i+1, j+1
	}
	return cmp.Or(cmp.Compare(len(a)-i, len(b)-j), strings.Compare(a, b))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}
