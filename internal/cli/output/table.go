package output

import (
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// WriteTable prints rows under header the way the flux CLI lays its tables
// out, byte for byte, so scripts written against `flux get` read weir's
// output too: every cell is left-aligned and padded to its column's width;
// data cells are each followed by a tab; header cells are separated by a tab
// and the last one carries one space of padding instead. Header names are
// upper-cased. A nil header prints the rows alone (--no-header, and the
// rows `--watch` prints after the first).
func WriteTable(w io.Writer, header []string, rows [][]string) error {
	cols := len(header)
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	widths := make([]int, cols)
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	if len(header) > 0 {
		for i, h := range header {
			b.WriteString(pad(strings.ToUpper(h), widths[i]))
			if i < len(header)-1 {
				b.WriteByte('\t')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	for _, r := range rows {
		for i := range cols {
			var c string
			if i < len(r) {
				c = r[i]
			}
			b.WriteString(pad(c, widths[i]))
			b.WriteByte('\t')
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pad(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// hexRun matches what the flux CLI shortens in tables: a word of 40 to 128
// lower-case hex digits, from a SHA-1 up to a SHA-512.
var hexRun = regexp.MustCompile(`\b[a-f0-9]{40,128}\b`)

// TruncateHex shortens every long hex digest in s to its first 8 digits,
// as the flux CLI does in REVISION and MESSAGE columns:
// main@sha1:696f056df216eea4f9401adbee0ff744d4df390f becomes main@sha1:696f056d.
func TruncateHex(s string) string {
	return hexRun.ReplaceAllStringFunc(s, func(h string) string { return h[:8] })
}
