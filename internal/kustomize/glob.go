package kustomize

import (
	"errors"
	"unicode/utf8"
)

// errBadPattern reports a malformed glob.
var errBadPattern = errors.New("syntax error in pattern")

// globItem is one element of a compiled glob.
type globItem struct {
	kind   globKind
	lit    rune
	negate bool
	ranges [][2]rune // inclusive
}

type globKind uint8

const (
	globLiteral globKind = iota
	globAnyOne           // ?
	globAnyRun           // *
	globClass            // [...]
)

// glob is the pattern language of the trim forms: shell globs in which *
// and ? match any character including "/", with [...] classes (negated by
// a leading ^, ranges lo-hi) and \ escaping the next character.
type glob []globItem

func compileGlob(p string) (glob, error) {
	var g glob
	for i := 0; i < len(p); {
		r, w := utf8.DecodeRuneInString(p[i:])
		i += w
		switch r {
		case '*':
			g = append(g, globItem{kind: globAnyRun})
		case '?':
			g = append(g, globItem{kind: globAnyOne})
		case '\\':
			if i >= len(p) {
				return nil, errBadPattern
			}
			r, w = utf8.DecodeRuneInString(p[i:])
			i += w
			g = append(g, globItem{kind: globLiteral, lit: r})
		case '[':
			item, n, err := compileClass(p[i:])
			if err != nil {
				return nil, err
			}
			i += n
			g = append(g, item)
		default:
			g = append(g, globItem{kind: globLiteral, lit: r})
		}
	}
	return g, nil
}

// compileClass parses a class body after "[", returning the bytes used,
// closing bracket included.
func compileClass(p string) (globItem, int, error) {
	item := globItem{kind: globClass}
	i := 0
	if i < len(p) && p[i] == '^' {
		item.negate = true
		i++
	}
	readChar := func() (rune, error) {
		if i >= len(p) {
			return 0, errBadPattern
		}
		r, w := utf8.DecodeRuneInString(p[i:])
		switch r {
		case '-', ']':
			return 0, errBadPattern
		case '\\':
			i += w
			if i >= len(p) {
				return 0, errBadPattern
			}
			r, w = utf8.DecodeRuneInString(p[i:])
		}
		i += w
		return r, nil
	}
	for first := true; ; first = false {
		if i < len(p) && p[i] == ']' && !first {
			return item, i + 1, nil
		}
		lo, err := readChar()
		if err != nil {
			return item, 0, err
		}
		hi := lo
		if i < len(p) && p[i] == '-' {
			i++
			if hi, err = readChar(); err != nil {
				return item, 0, err
			}
		}
		item.ranges = append(item.ranges, [2]rune{lo, hi})
	}
}

func (it globItem) matches(r rune) bool {
	switch it.kind {
	case globAnyOne:
		return true
	case globLiteral:
		return r == it.lit
	case globClass:
		in := false
		for _, rg := range it.ranges {
			if rg[0] <= r && r <= rg[1] {
				in = true
				break
			}
		}
		return in != it.negate
	}
	return false
}

// match reports whether the whole of s matches the glob. It backtracks only
// to the last *, so it runs in O(len(s)·len(g)).
func (g glob) match(s string) bool {
	gi, si := 0, 0
	starG, starS := -1, 0
	for si < len(s) {
		if gi < len(g) && g[gi].kind == globAnyRun {
			starG, starS = gi, si
			gi++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[si:])
		if gi < len(g) && g[gi].matches(r) {
			gi++
			si += w
			continue
		}
		if starG < 0 {
			return false
		}
		// Let the last * swallow one more character and retry.
		_, sw := utf8.DecodeRuneInString(s[starS:])
		starS += sw
		si = starS
		gi = starG + 1
	}
	for gi < len(g) && g[gi].kind == globAnyRun {
		gi++
	}
	return gi == len(g)
}
