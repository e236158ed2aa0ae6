package generate

import (
	"fmt"
	"path"
	"strings"

	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
)

// parseFrom splits "@alias/pattern" into its alias and pattern.
func parseFrom(from string) (alias, pattern string, err error) {
	rest, ok := strings.CutPrefix(from, "@")
	if !ok {
		return "", "", specErrorf("invalid copy source '%s': source must start with '@'", from)
	}
	alias, pattern, ok = strings.Cut(rest, "/")
	if !ok || alias == "" {
		return "", "", specErrorf("invalid copy source '%s': source format must be '@alias/pattern'", from)
	}
	if err := checkPattern(pattern); err != nil {
		return "", "", specErrorf("invalid copy source '%s': %v", from, err)
	}
	return alias, pattern, nil
}

// parseTo returns the artifact-relative destination of "@artifact/path"
// ("." for the root) and whether it names a directory (a trailing slash,
// or the root).
func parseTo(to string) (dest string, dir bool, err error) {
	rest, ok := strings.CutPrefix(to, "@"+sourceextensionsv1beta1.ArtifactAlias+"/")
	if !ok {
		return "", false, specErrorf("invalid copy destination '%s': destination must start with '@artifact/'", to)
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == ".." {
			return "", false, specErrorf("invalid copy destination '%s': destination path must not contain '..'", to)
		}
	}
	if strings.HasPrefix(rest, "/") || strings.Contains(rest, "\\") || strings.ContainsRune(rest, 0) {
		return "", false, specErrorf("invalid copy destination '%s': destination path must stay within the artifact root", to)
	}
	clean := path.Clean(rest)
	if rest == "" || clean == "." {
		return ".", true, nil
	}
	return clean, strings.HasSuffix(rest, "/"), nil
}

// hasGlob reports whether p holds a wildcard.
func hasGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// checkPattern refuses patterns that could only lead out of a tree or that
// path.Match cannot read.
func checkPattern(p string) error {
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("pattern '%s' must be relative", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return fmt.Errorf("pattern '%s' must not contain '..'", p)
		}
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("invalid glob pattern '%s': %w", p, err)
		}
	}
	return nil
}

// match reports whether the slash-separated path name matches pattern:
// "**" as a whole segment matches any number of segments, zero included;
// other segments are path.Match patterns of one segment.
func match(pattern, name string) bool {
	return matchSegments(splitPath(pattern), splitPath(name))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(name); i++ {
				if matchSegments(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

func splitPath(p string) []string {
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// literalPrefix is the part of pattern before its first segment with a
// wildcard, "." when the first segment has one.
func literalPrefix(pattern string) string {
	var lit []string
	for _, seg := range splitPath(pattern) {
		if hasGlob(seg) {
			break
		}
		lit = append(lit, seg)
	}
	if len(lit) == 0 {
		return "."
	}
	return strings.Join(lit, "/")
}

// excluded reports whether name (source-relative) is left out by the
// exclude patterns: matched as it is, below base (the copy's literal
// prefix), and, for patterns without a slash, by its base name.
func excluded(name, base string, patterns []string) bool {
	if len(patterns) == 0 {
		return false
	}
	candidates := []string{name}
	if base != "." {
		if rel, ok := strings.CutPrefix(name, base+"/"); ok {
			candidates = append(candidates, rel)
		}
	}
	for _, p := range patterns {
		for _, c := range candidates {
			if match(p, c) {
				return true
			}
		}
		if !strings.Contains(p, "/") && match(p, path.Base(name)) {
			return true
		}
	}
	return false
}

// isTarball reports whether name looks like what Extract unpacks.
func isTarball(name string) bool {
	return strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".tgz")
}
