package meta

import "strings"

// SameRevision reports whether two revision strings name the same commit
// or digest, accepting the older formats Flux still accepts for it:
// "main@sha1:<hex>", "main/<hex>" and a bare "<hex>" (or "sha1:<hex>") are
// the same revision. Empty strings match nothing.
func SameRevision(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	return a == b || revisionHash(a) == revisionHash(b)
}

// revisionHash reduces "<ref>@<algo>:<hex>", "<ref>/<hex>" and
// "<algo>:<hex>" to "<hex>".
func revisionHash(rev string) string {
	if i := strings.LastIndexAny(rev, ":/"); i >= 0 {
		return rev[i+1:]
	}
	return rev
}
